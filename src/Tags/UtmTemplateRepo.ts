import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { UtmFields, UtmTemplate } from "./UtmTemplate.ts"

/** UTM templates of a domain; each belongs to the domain's account. */
export class UtmTemplateRepo extends Effect.Service<UtmTemplateRepo>()("UtmTemplateRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The new template, or none when the domain does not exist. */
    const create = SqlSchema.findOne({
      Request: Schema.Struct({ domainId: Schema.Int, name: Schema.String, fields: Schema.parseJson(UtmFields) }),
      Result: UtmTemplate,
      execute: ({ domainId, name, fields }) => sql`
        INSERT INTO utm_templates (account_id, domain_id, name, fields)
        SELECT account_id, id, ${name}, ${fields}::jsonb FROM domains WHERE id = ${domainId} AND status <> 'deleted'
        RETURNING id, name, fields`
    })

    /** The templates of a domain of the account, oldest first; empty when the domain is another account's. */
    const listByDomain = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.Int, domainId: Schema.Int }),
      Result: UtmTemplate,
      execute: ({ accountId, domainId }) => sql`
        SELECT id, name, fields FROM utm_templates
        WHERE account_id = ${accountId} AND domain_id = ${domainId}
        ORDER BY id`
    })

    /** One template of a domain of the account. */
    const findOnDomain = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.Int, domainId: Schema.Int, id: Schema.Int }),
      Result: UtmTemplate,
      execute: ({ accountId, domainId, id }) => sql`
        SELECT id, name, fields FROM utm_templates
        WHERE account_id = ${accountId} AND domain_id = ${domainId} AND id = ${id}`
    })

    return { create, listByDomain, findOnDomain } as const
  })
}) {}
