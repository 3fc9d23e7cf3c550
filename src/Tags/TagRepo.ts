import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Tag } from "./Tag.ts"

const columns = (sql: SqlClient.SqlClient) =>
  sql`id, domain_id, user_id, name, shared, notes, floor(extract(epoch FROM created))::int8 AS created,
      floor(extract(epoch FROM created))::int8 AS modified`

/** Tags of a domain: shared ones are seen by the whole account, the others by their creator only (T1). */
export class TagRepo extends Effect.Service<TagRepo>()("TagRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const listVisible = SqlSchema.findAll({
      Request: Schema.Struct({ domainId: Schema.Int, userId: Schema.Int, search: Schema.String }),
      Result: Tag,
      execute: ({ domainId, userId, search }) => sql`
        SELECT ${columns(sql)} FROM tags
        WHERE domain_id = ${domainId} AND (shared OR user_id = ${userId})
          AND position(lower(${search}) IN lower(name)) > 0
        ORDER BY lower(name), id`
    })

    /** The new tag, or none when the domain has a tag of that name (ignoring case). */
    const create = (input: { domainId: number; userId: number; name: string; shared: boolean; notes: string }) =>
      Effect.map(
        sql<{ id: number }>`
          INSERT INTO tags (domain_id, user_id, name, shared, notes)
          VALUES (${input.domainId}, ${input.userId}, ${input.name}, ${input.shared}, ${input.notes})
          ON CONFLICT (domain_id, lower(name)) DO NOTHING
          RETURNING id`,
        (rows) => Option.fromNullable(rows[0]?.id)
      )

    const findById = SqlSchema.single({
      Request: Schema.Int,
      Result: Tag,
      execute: (id) => sql`SELECT ${columns(sql)} FROM tags WHERE id = ${id}`
    })

    return { listVisible, create, findById } as const
  })
}) {}
