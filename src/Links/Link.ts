import { Schema } from "effect"
import { Unset } from "../Platform/Unset.ts"

/** A link's short URL: its domain's scheme and name, and its alias as stored. */
export const shortLinkOf = (hasSsl: boolean, domain: string, alias: string) => `${hasSsl ? "https" : "http"}://${domain}/${alias}`

export const LinkStatus = Schema.Literal("active", "archived", "deleted")
export type LinkStatus = typeof LinkStatus.Type

export class LinkTag extends Schema.Class<LinkTag>("LinkTag")({
  name: Schema.String,
  shared: Schema.Boolean
}) {}

/** A link as version 4 shows it (the real API's fields, with `tags` and the ids of its `groups`). */
export class Link extends Schema.Class<Link>("Link")({
  id: Schema.Int,
  url: Schema.String,
  alias: Schema.String,
  short_link: Schema.String,
  redirect_url: Schema.String,
  created: Schema.Int,
  modified: Schema.Int,
  user_id: Schema.Int,
  domain_id: Schema.Int,
  click_count: Schema.Int,
  notify_on_click: Schema.Literal("0", "1"),
  notes: Schema.String,
  redirect_type: Schema.Literal(301, 307),
  status: LinkStatus,
  template_id: Unset(Schema.Int),
  delete_on: Unset(Schema.Int),
  archive_on: Unset(Schema.Int),
  /** The host and the path of `redirect_url`, as the real API's E11 gives them. */
  redirect_url_domain: Schema.String,
  redirect_url_path: Schema.String,
  tags: Schema.Array(LinkTag),
  groups: Schema.Array(Schema.Int)
}) {}

