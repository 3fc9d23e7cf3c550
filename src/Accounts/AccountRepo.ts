import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Plan } from "./User.ts"

export class Account extends Schema.Class<Account>("Account")({
  id: Schema.Int,
  name: Schema.String,
  plan: Plan,
  link_quota: Schema.NullOr(Schema.Int)
}) {}

export class AccountRepo extends Effect.Service<AccountRepo>()("AccountRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const create = SqlSchema.single({
      Request: Schema.Struct({ name: Schema.String, plan: Plan, link_quota: Schema.NullOr(Schema.Int) }),
      Result: Account,
      execute: (input) => sql`INSERT INTO accounts ${sql.insert(input)} RETURNING id, name, plan, link_quota`
    })

    const findById = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Account,
      execute: (id) => sql`SELECT id, name, plan, link_quota FROM accounts WHERE id = ${id}`
    })

    return { create, findById } as const
  })
}) {}
