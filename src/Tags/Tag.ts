import { Schema } from "effect"

/** A tag as T1 and T2 show it; tags are never changed, so `modified` is `created`. */
export class Tag extends Schema.Class<Tag>("Tag")({
  id: Schema.Int,
  domain_id: Schema.Int,
  user_id: Schema.Int,
  name: Schema.String,
  shared: Schema.Boolean,
  notes: Schema.String,
  created: Schema.Int,
  modified: Schema.Int
}) {}
