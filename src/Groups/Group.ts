import { Schema } from "effect"

export const MAX_GROUP_NAME_LENGTH = 200

/** A group of links of one domain, as G1 shows it: `users` are the listed users' ids, ascending. */
export class Group extends Schema.Class<Group>("Group")({
  id: Schema.Int,
  name: Schema.String,
  created: Schema.Int,
  modified: Schema.Int,
  domain_id: Schema.Int,
  user_id: Schema.Int,
  is_global: Schema.Literal("1", "0"),
  users: Schema.Array(Schema.Int)
}) {}
