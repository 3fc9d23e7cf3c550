import { SqlClient, SqlSchema } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Schema } from "effect"
import { Plan, Role } from "./User.ts"
import { AccountUser, UserDomain } from "./AccountUser.ts"
import { unlessNull } from "../Platform/Unset.ts"

export class UserRecord extends Schema.Class<UserRecord>("UserRecord")({
  id: Schema.Int,
  account_id: Schema.Int,
  email: Schema.String,
  nickname: Schema.String,
  role: Role,
  plan: Plan,
  link_quota: Schema.NullOr(Schema.Int),
  password_hash: Schema.String,
  refresh_token_hash: Schema.Uint8ArrayFromSelf,
  disabled: Schema.Boolean
}) {}

const Bytes = Schema.Uint8ArrayFromSelf

/** The user an operator's change reached. */
const Changed = Schema.Struct({ id: Schema.Int, email: Schema.String })

class AccountUserRow extends Schema.Class<AccountUserRow>("AccountUserRow")({
  user_id: Schema.Int,
  first_name: Schema.NullOr(Schema.String),
  last_name: Schema.NullOr(Schema.String),
  email_address: Schema.String,
  nickname: Schema.String,
  role: Role,
  domains: Schema.Array(UserDomain),
  total: Schema.Int
}) {
  toUser(): AccountUser {
    const { first_name, last_name, total: _, ...rest } = this
    return new AccountUser({ ...rest, ...unlessNull({ first_name, last_name }) })
  }
}

/** A user row as `UserRecord`, with `more` columns after it. */
const selectUser = (sql: SqlClient.SqlClient, more: Fragment = sql``) => sql`
  SELECT u.id, u.account_id, u.email, u.nickname, u.role, a.plan, a.link_quota, u.password_hash, u.refresh_token_hash,
         u.disabled ${more}
  FROM users u JOIN accounts a ON a.id = u.account_id`

/** The click rollups summed per link owner, each with its time column, in the order the click writer adds to them. */
const OWNER_ROLLUPS = [
  ["click_rollups_user_hour", "hour"],
  ["click_rollups_user", "day"],
  ["click_rollups_user_month", "month"]
] as const

export class UserRepo extends Effect.Service<UserRepo>()("UserRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const findById = SqlSchema.findOne({
      Request: Schema.Int,
      Result: UserRecord,
      execute: (id) => sql`${selectUser(sql)} WHERE u.id = ${id}`
    })

    const findByEmail = SqlSchema.findOne({
      Request: Schema.String,
      Result: UserRecord,
      execute: (email) => sql`${selectUser(sql)} WHERE lower(u.email) = lower(${email})`
    })

    /** The owner, not disabled, of an access token that has not expired at `now` (Unix seconds), when it expires, and its seed. */
    const findByAccessToken = SqlSchema.findOne({
      Request: Schema.Struct({ hash: Bytes, now: Schema.Int }),
      Result: Schema.Struct({ user: UserRecord, expires: Schema.Int, seed: Bytes }),
      execute: ({ hash, now }) =>
        Effect.map(
          sql<UserRecord & { expires: number; seed: Uint8Array }>`
            ${selectUser(sql, sql`, floor(extract(epoch FROM t.expires))::int8 AS expires, t.seed`)}
            JOIN access_tokens t ON t.user_id = u.id
            WHERE t.token_hash = ${hash} AND t.expires > to_timestamp(${now}) AND NOT u.disabled`,
          (rows) => rows.map(({ expires, seed, ...user }) => ({ user, expires, seed }))
        )
    })

    const findByRefreshToken = SqlSchema.findOne({
      Request: Schema.Struct({ email: Schema.String, hash: Bytes }),
      Result: UserRecord,
      execute: ({ email, hash }) =>
        sql`${selectUser(sql)} WHERE lower(u.email) = lower(${email}) AND u.refresh_token_hash = ${hash}`
    })

    const create = SqlSchema.single({
      Request: Schema.Struct({
        account_id: Schema.Int,
        email: Schema.String,
        nickname: Schema.String,
        role: Role,
        first_name: Schema.NullOr(Schema.String),
        last_name: Schema.NullOr(Schema.String),
        password_hash: Schema.String,
        refresh_token_hash: Bytes
      }),
      Result: Schema.Struct({ id: Schema.Int }),
      execute: (input) => sql`INSERT INTO users ${sql.insert(input)} RETURNING id`
    })

    const setRefreshToken = SqlSchema.findOne({
      Request: Schema.Struct({ email: Schema.String, hash: Bytes }),
      Result: Changed,
      execute: ({ email, hash }) =>
        sql`UPDATE users SET refresh_token_hash = ${hash}, modified = now() WHERE lower(email) = lower(${email}) RETURNING id, email`
    })

    const setPassword = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Int, hash: Schema.String }),
      Result: Changed,
      execute: ({ hash, id }) => sql`UPDATE users SET password_hash = ${hash}, modified = now() WHERE id = ${id} RETURNING id, email`
    })

    const setDisabled = SqlSchema.findOne({
      Request: Schema.Struct({ email: Schema.String, disabled: Schema.Boolean }),
      Result: Changed,
      execute: ({ disabled, email }) =>
        sql`UPDATE users SET disabled = ${disabled}, modified = now() WHERE lower(email) = lower(${email}) RETURNING id, email`
    })

    /** A page of the account's users by id, each with the account's domains that are not deleted and their role there. */
    const listOfAccount = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.Int, limit: Schema.Int, offset: Schema.Int }),
      Result: AccountUserRow,
      execute: ({ accountId, limit, offset }) => sql`
        SELECT u.id AS user_id, u.first_name, u.last_name, u.email AS email_address, u.nickname, u.role,
               coalesce((SELECT json_agg(json_build_object(
                          'id', d.id, 'name', d.domain,
                          'role', CASE WHEN u.role = 'account_admin'
                                         OR EXISTS (SELECT 1 FROM domain_admins da WHERE da.user_id = u.id AND da.domain_id = d.id)
                                       THEN 'domain_admin' ELSE 'member' END) ORDER BY d.id)
                         FROM domains d WHERE d.account_id = u.account_id AND d.status <> 'deleted'), '[]') AS domains,
               count(*) OVER () AS total
        FROM users u WHERE u.account_id = ${accountId}
        ORDER BY u.id LIMIT ${limit} OFFSET ${offset}`
    })

    const countOfAccount = (accountId: number) =>
      Effect.map(sql<{ n: number }>`SELECT count(*)::int8 AS n FROM users WHERE account_id = ${accountId}`, (rows) => rows[0]?.n ?? 0)

    /** What the user owns that keeps their row: links (deleted ones too, whose clicks still count), tags and groups. */
    const owned = (id: number) =>
      Effect.map(
        sql<{ links: number; tags: number; groups: number }>`
          SELECT (SELECT count(*) FROM links WHERE user_id = ${id})::int8 AS links,
                 (SELECT count(*) FROM tags WHERE user_id = ${id})::int8 AS tags,
                 (SELECT count(*) FROM link_groups WHERE user_id = ${id})::int8 AS groups`,
        (rows) => rows[0] ?? { links: 0, tags: 0, groups: 0 }
      )

    /**
     * The users' rows locked until the transaction ends, in id order (two deletions naming each other
     * wait instead of deadlocking), as they are now.
     */
    const lock = (ids: ReadonlyArray<number>) =>
      sql<{ id: number; account_id: number; email: string; disabled: boolean }>`
        SELECT id, account_id, email, disabled FROM users WHERE ${sql.in("id", ids)} ORDER BY id FOR UPDATE`

    /**
     * Hands everything `from` owns to `to`, in the caller's transaction: links (deleted ones too), tags,
     * groups, import runs, and the owner's share of the click rollups, added to `to`'s. The links are
     * locked first, in id order as the click writer locks them; a batch of clicks that was writing to
     * them has then committed its rollups (moved with the rest), and one that comes later waits and
     * counts them for `to`.
     */
    const handOver = (from: number, to: number) =>
      Effect.gen(function* () {
        yield* sql`SELECT 1 FROM links WHERE user_id = ${from} ORDER BY id FOR NO KEY UPDATE`
        const moved = (table: string) =>
          Effect.map(
            sql<{ n: number }>`
              WITH moved AS (UPDATE ${sql(table)} SET user_id = ${to} WHERE user_id = ${from} RETURNING 1)
              SELECT count(*)::int8 AS n FROM moved`,
            (rows) => rows[0]?.n ?? 0
          )
        const links = yield* moved("links")
        const tags = yield* moved("tags")
        const groups = yield* moved("link_groups")
        yield* moved("import_runs")
        for (const [table, time] of OWNER_ROLLUPS) {
          const key = sql.literal(`domain_id, kind, ${time}, user_id, value, region, city`)
          yield* sql`
            INSERT INTO ${sql(table)} (${key}, clicks, scans)
            SELECT domain_id, kind, ${sql(time)}, ${to}::int8, value, region, city, clicks, scans
            FROM ${sql(table)} WHERE user_id = ${from}
            ORDER BY domain_id, kind, ${sql(time)}, value, region, city
            ON CONFLICT (${key})
            DO UPDATE SET clicks = ${sql(table)}.clicks + excluded.clicks, scans = ${sql(table)}.scans + excluded.scans`
          yield* sql`DELETE FROM ${sql(table)} WHERE user_id = ${from}`
        }
        return { links, tags, groups }
      })

    /** Deletes the user (their access tokens, domain admin rights and group memberships go with them). */
    const remove = (id: number) => sql`DELETE FROM users WHERE id = ${id}`.pipe(Effect.asVoid)

    const count = Effect.map(sql<{ n: number }>`SELECT count(*)::int8 AS n FROM users`, (rows) => rows[0]?.n ?? 0)

    return {
      findById,
      findByEmail,
      findByAccessToken,
      findByRefreshToken,
      create,
      setRefreshToken,
      setPassword,
      setDisabled,
      listOfAccount,
      countOfAccount,
      owned,
      lock,
      handOver,
      remove,
      count
    } as const
  })
}) {}
