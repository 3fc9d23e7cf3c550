import { Schema } from "effect"

/** A tag as T1 and T2 show it (the spec shows name and shared; the rest is ours). */
export class Tag extends Schema.Class<Tag>("Tag")({
  id: Schema.Int,
  domain_id: Schema.Int,
  user_id: Schema.Int,
  name: Schema.String,
  shared: Schema.Boolean,
  notes: Schema.String,
  created: Schema.Int
}) {}
