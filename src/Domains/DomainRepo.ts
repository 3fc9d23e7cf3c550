import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Domain, DomainStatus } from "./Domain.ts"
import { unlessNull } from "../Platform/Unset.ts"

class DomainRow extends Schema.Class<DomainRow>("DomainRow")({
  id: Schema.Int,
  domain: Schema.String,
  created: Schema.Int,
  modified: Schema.Int,
  is_default: Schema.Boolean,
  type: Schema.String,
  status: DomainStatus,
  url_404: Schema.NullOr(Schema.String),
  homepage: Schema.NullOr(Schema.String),
  has_ssl: Schema.Boolean
}) {
  /** Built unchecked, as a link is (`LinkRepo.ts`). */
  toDomain(): Domain {
    const { is_default, url_404, homepage, ...rest } = this
    return new Domain({ ...rest, ...unlessNull({ url_404, homepage }), default: is_default }, true)
  }
}

class DomainPageRow extends DomainRow.extend<DomainPageRow>("DomainPageRow")({ total: Schema.Int }) {}

export type DomainChanges = {
  readonly status?: DomainStatus
  readonly homepage?: string | null
  readonly url_404?: string | null
}

export interface NewDomain {
  readonly accountId: number
  readonly domain: string
  readonly url_404: string | null
  readonly homepage: string | null
}

const Scope = Schema.Struct({ accountId: Schema.Int, userId: Schema.Int })

/** Domains as one user of one account sees them: nothing of another account is ever returned. */
export class DomainRepo extends Effect.Service<DomainRepo>()("DomainRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const select = (userId: number) => sql`
      SELECT d.id, d.domain, d.type, d.status, d.has_ssl, d.url_404, d.homepage,
             floor(extract(epoch FROM d.created))::int8 AS created,
             floor(extract(epoch FROM d.modified))::int8 AS modified,
             coalesce(d.id = (SELECT default_domain_id FROM users WHERE id = ${userId}), false) AS is_default
      FROM domains d`

    /** A page of active domains, each row also carrying the total number of them. */
    const listActive = SqlSchema.findAll({
      Request: Schema.Struct({ ...Scope.fields, limit: Schema.Int, offset: Schema.Int }),
      Result: DomainPageRow,
      execute: ({ accountId, userId, limit, offset }) =>
        sql`SELECT page.*, count(*) OVER () AS total FROM (${select(userId)}
              WHERE d.account_id = ${accountId} AND d.status = 'active') page
            ORDER BY page.id LIMIT ${limit} OFFSET ${offset}`
    })

    const countActive = (accountId: number) =>
      Effect.map(
        sql<{ n: number }>`SELECT count(*)::int8 AS n FROM domains WHERE account_id = ${accountId} AND status = 'active'`,
        (rows) => rows[0]?.n ?? 0
      )

    const byId = SqlSchema.findOne({
      Request: Schema.Struct({ ...Scope.fields, id: Schema.Int }),
      Result: DomainRow,
      execute: ({ accountId, userId, id }) =>
        sql`${select(userId)} WHERE d.account_id = ${accountId} AND d.id = ${id} AND d.status <> 'deleted'`
    })

    const byName = SqlSchema.findOne({
      Request: Schema.Struct({ ...Scope.fields, name: Schema.String }),
      Result: DomainRow,
      execute: ({ accountId, userId, name }) =>
        sql`${select(userId)} WHERE d.account_id = ${accountId} AND d.domain = ${name} AND d.status <> 'deleted'`
    })

    /** The new domain's id, or none when the name is taken (by a domain of any account that is not deleted). */
    const create = (input: NewDomain) =>
      Effect.map(
        sql<{ id: number }>`
          INSERT INTO domains (account_id, domain, url_404, homepage)
          VALUES (${input.accountId}, ${input.domain}, ${input.url_404}, ${input.homepage})
          ON CONFLICT (domain) WHERE status <> 'deleted' DO NOTHING
          RETURNING id`,
        (rows) => Option.fromNullable(rows[0]?.id)
      )

    const update = (accountId: number, id: number, changes: DomainChanges) =>
      Effect.map(
        sql<{ id: number }>`
          UPDATE domains SET ${sql.update(changes)}, modified = now()
          WHERE account_id = ${accountId} AND id = ${id} AND status <> 'deleted'
          RETURNING id`,
        (rows) => rows.length > 0
      )

    const setDefault = (userId: number, domainId: number) =>
      sql`UPDATE users SET default_domain_id = ${domainId}, modified = now() WHERE id = ${userId}`.pipe(Effect.asVoid)

    const setSsl = (id: number, hasSsl: boolean) =>
      Effect.map(
        sql<{ id: number }>`
          UPDATE domains SET has_ssl = ${hasSsl}, modified = now() WHERE id = ${id} AND status <> 'deleted' RETURNING id`,
        (rows) => rows.length > 0
      )

    /** Makes the user a domain admin; false when user or domain is unknown or they are in different accounts. */
    const addAdmin = (userId: number, domainId: number) =>
      Effect.map(
        sql<{ user_id: number }>`
          INSERT INTO domain_admins (user_id, domain_id)
          SELECT u.id, d.id FROM users u JOIN domains d ON d.account_id = u.account_id
          WHERE u.id = ${userId} AND d.id = ${domainId} AND d.status <> 'deleted'
          ON CONFLICT (user_id, domain_id) DO UPDATE SET user_id = EXCLUDED.user_id
          RETURNING user_id`,
        (rows) => rows.length > 0
      )

    const isAdmin = (userId: number, domainId: number) =>
      Effect.map(
        sql<{ n: number }>`SELECT count(*)::int8 AS n FROM domain_admins WHERE user_id = ${userId} AND domain_id = ${domainId}`,
        (rows) => (rows[0]?.n ?? 0) > 0
      )

    /**
     * Marks the domain deleted and every link of it with it, in the caller's transaction; false when
     * it is not a domain of the account (or already deleted). The row stays for the clicks that name it.
     */
    const remove = (accountId: number, id: number) =>
      Effect.gen(function* () {
        const deleted = yield* sql<{ id: number }>`
          UPDATE domains SET status = 'deleted', modified = now()
          WHERE account_id = ${accountId} AND id = ${id} AND status <> 'deleted'
          RETURNING id`
        if (deleted.length === 0) return false
        yield* sql`UPDATE links SET status = 'deleted', modified = now() WHERE domain_id = ${id} AND status <> 'deleted'`
        return true
      })

    return { listActive, countActive, byId, byName, create, update, remove, setDefault, setSsl, addAdmin, isAdmin } as const
  })
}) {}
