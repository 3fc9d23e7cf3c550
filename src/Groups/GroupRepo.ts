import { SqlClient, SqlSchema } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Option, Schema } from "effect"
import { Group } from "./Group.ts"

/**
 * Whether the group `g` is one the user sees: global, created by them, or listing them. That its
 * domain is the user's account's and not deleted is for the query to check.
 */
export const groupVisibleTo = (sql: SqlClient.SqlClient, userId: number): Fragment => sql`
  (g.is_global OR g.user_id = ${userId}
   OR EXISTS (SELECT 1 FROM link_group_users gu WHERE gu.group_id = g.id AND gu.user_id = ${userId}))`

class GroupPageRow extends Group.extend<GroupPageRow>("GroupPageRow")({ total: Schema.Int }) {
  toGroup(): Group {
    const { total: _, ...group } = this
    return new Group(group)
  }
}

const Viewer = Schema.Struct({ domainId: Schema.Int, userId: Schema.Int })

/** What a group holds besides its fields: `users` (link_group_users) and `links` (link_group_links). */
export type GroupMembers = "users" | "links"

const memberTables = {
  users: { table: "link_group_users", column: "user_id" },
  links: { table: "link_group_links", column: "link_id" }
} as const

/** Groups of links of a domain (G1 and the admin CLI). */
export class GroupRepo extends Effect.Service<GroupRepo>()("GroupRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const columns = sql`
      g.id, g.name, floor(extract(epoch FROM g.created))::int8 AS created,
      floor(extract(epoch FROM g.modified))::int8 AS modified, g.domain_id, g.user_id,
      CASE WHEN g.is_global THEN '1' ELSE '0' END AS is_global,
      coalesce((SELECT json_agg(gu.user_id ORDER BY gu.user_id) FROM link_group_users gu WHERE gu.group_id = g.id), '[]') AS users`

    const isLiveDomain = (domainId: number) =>
      Effect.map(
        sql<{ id: number }>`SELECT id FROM domains WHERE id = ${domainId} AND status <> 'deleted'`,
        (rows) => rows.length > 0
      )

    /** A page of the domain's groups the user sees, by id, each row also carrying their number. */
    const listVisible = SqlSchema.findAll({
      Request: Schema.Struct({ ...Viewer.fields, limit: Schema.Int, offset: Schema.Int }),
      Result: GroupPageRow,
      execute: ({ domainId, userId, limit, offset }) => sql`
        SELECT ${columns}, count(*) OVER () AS total FROM link_groups g
        WHERE g.domain_id = ${domainId} AND ${groupVisibleTo(sql, userId)}
        ORDER BY g.id LIMIT ${limit} OFFSET ${offset}`
    })

    const countVisible = ({ domainId, userId }: typeof Viewer.Type) =>
      Effect.map(
        sql<{ n: number }>`
          SELECT count(*)::int8 AS n FROM link_groups g WHERE g.domain_id = ${domainId} AND ${groupVisibleTo(sql, userId)}`,
        (rows) => rows[0]?.n ?? 0
      )

    /** Whether the group is on that domain of the account, the domain not deleted, and the user sees it. */
    const isVisible = (input: { accountId: number; userId: number; domainId: number; groupId: number }) =>
      Effect.map(
        sql<{ id: number }>`
          SELECT g.id FROM link_groups g JOIN domains d ON d.id = g.domain_id
          WHERE g.id = ${input.groupId} AND g.domain_id = ${input.domainId} AND d.account_id = ${input.accountId}
            AND d.status <> 'deleted' AND ${groupVisibleTo(sql, input.userId)}`,
        (rows) => rows.length > 0
      )

    /** Every group of the domain, by id, whoever sees it. */
    const listByDomain = SqlSchema.findAll({
      Request: Schema.Int,
      Result: Group,
      execute: (domainId) => sql`SELECT ${columns} FROM link_groups g WHERE g.domain_id = ${domainId} ORDER BY g.id`
    })

    /** A group whose domain is not deleted. */
    const findById = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Group,
      execute: (id) => sql`
        SELECT ${columns} FROM link_groups g JOIN domains d ON d.id = g.domain_id
        WHERE g.id = ${id} AND d.status <> 'deleted'`
    })

    /** The account admin with the lowest id of the domain's account. */
    const firstAccountAdmin = (domainId: number) =>
      Effect.map(
        sql<{ id: number }>`
          SELECT u.id FROM users u JOIN domains d ON d.account_id = u.account_id
          WHERE d.id = ${domainId} AND u.role = 'account_admin' ORDER BY u.id LIMIT 1`,
        (rows) => Option.fromNullable(rows[0]?.id)
      )

    /** Those of `userIds` that are users of the domain's account. */
    const usersOfDomainAccount = (domainId: number, userIds: ReadonlyArray<number>) =>
      Effect.map(
        sql<{ id: number }>`
          SELECT u.id FROM users u JOIN domains d ON d.account_id = u.account_id
          WHERE d.id = ${domainId} AND ${sql.in("u.id", userIds)}`,
        (rows) => rows.map((row) => row.id)
      )

    const isLiveLinkOf = (domainId: number, linkId: number) =>
      Effect.map(
        sql<{ id: number }>`SELECT id FROM links WHERE id = ${linkId} AND domain_id = ${domainId} AND status <> 'deleted'`,
        (rows) => rows.length > 0
      )

    /** The new group's id, or none when the domain has a group of that name (ignoring case). */
    const create = (input: { domainId: number; userId: number; name: string; isGlobal: boolean }) =>
      Effect.map(
        sql<{ id: number }>`
          INSERT INTO link_groups (domain_id, user_id, name, is_global)
          VALUES (${input.domainId}, ${input.userId}, ${input.name}, ${input.isGlobal})
          ON CONFLICT (domain_id, lower(name)) DO NOTHING
          RETURNING id`,
        (rows) => Option.fromNullable(rows[0]?.id)
      )

    /** Adds users or links to the group; `modified` moves only when one of them was not in it yet. */
    const addMembers = (members: GroupMembers, groupId: number, ids: ReadonlyArray<number>) => {
      if (ids.length === 0) return Effect.void
      const { table, column } = memberTables[members]
      const rows = ids.map((id) => ({ group_id: groupId, [column]: id }))
      return sql`
        WITH added AS (
          INSERT INTO ${sql(table)} ${sql.insert(rows)} ON CONFLICT DO NOTHING RETURNING group_id
        )
        UPDATE link_groups SET modified = now() WHERE id IN (SELECT group_id FROM added)`.pipe(Effect.asVoid)
    }

    return {
      isLiveDomain,
      listVisible,
      countVisible,
      isVisible,
      listByDomain,
      findById,
      firstAccountAdmin,
      usersOfDomainAccount,
      isLiveLinkOf,
      create,
      addMembers
    } as const
  })
}) {}
