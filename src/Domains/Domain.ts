import { Schema } from "effect"

export const DomainStatus = Schema.Literal("active", "disabled")
export type DomainStatus = typeof DomainStatus.Type

/** A short domain as version 4 shows it (the real API's fields; `status` is ours). */
export class Domain extends Schema.Class<Domain>("Domain")({
  id: Schema.Int,
  domain: Schema.String,
  created: Schema.Int,
  modified: Schema.Int,
  default: Schema.Boolean,
  type: Schema.String,
  status: DomainStatus,
  url_404: Schema.NullOr(Schema.String),
  homepage: Schema.NullOr(Schema.String),
  has_ssl: Schema.Boolean
}) {}
