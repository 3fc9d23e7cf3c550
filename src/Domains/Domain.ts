import { Schema } from "effect"
import { Unset } from "../Platform/Unset.ts"

export const DomainStatus = Schema.Literal("active", "disabled")
export type DomainStatus = typeof DomainStatus.Type

/** A short domain as version 4 shows it (the real API's fields; `status` is ours); `url_404` and `homepage` are left out when the domain has none. */
export class Domain extends Schema.Class<Domain>("Domain")({
  id: Schema.Int,
  domain: Schema.String,
  created: Schema.Int,
  modified: Schema.Int,
  default: Schema.Boolean,
  type: Schema.String,
  status: DomainStatus,
  url_404: Unset(Schema.String),
  homepage: Unset(Schema.String),
  has_ssl: Schema.Boolean
}) {}
