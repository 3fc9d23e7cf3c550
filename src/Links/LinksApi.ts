import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Link } from "./Link.ts"
import { Authentication } from "../Auth/Authentication.ts"
import { QrFormat } from "./QrRenderer.ts"
import { coded, PathId, required } from "../Platform/Coded.ts"

/** On E4 a non-numeric domain is invalid input (400); elsewhere an id that is not one is not found (CONTRACT §5). */
const createDomainId = HttpApiSchema.param("domain_id", PathId(10101, 400))
const domainId = HttpApiSchema.param("domain_id", PathId(10101))
const linkId = HttpApiSchema.param("link_id", PathId(10150))

const field = (description: string) => Schema.optional(Schema.Unknown.annotations({ description }))

/** Field values are checked by the handler against the rules of CONTRACT §6, every problem reported. */
export const CreateLink = Schema.Struct({
  url: field("required; the long URL, http or https (http:// is assumed without a scheme)"),
  alias: field("1-40 characters from A-Z a-z 0-9 - _ ."),
  rand_alias_length: field("4-40; length of the generated alias when no alias is given (default 6)"),
  dupe_check: field("1: return the caller's existing active link to the same url if there is one"),
  notes: field("at most 1000 characters"),
  notify_on_click: field("0 or 1"),
  override_404_check: field("1: do not check whether the long URL answers 404"),
  tags: field("array of {name, shared}"),
  utm_template_id: field("a UTM template of the domain"),
  utm_fields: field("object of the template's field codes to values"),
  archive_on: field("Unix timestamp in the future"),
  delete_on: field("Unix timestamp in the future"),
  redirect_type: field("301 or 307")
})

/**
 * E12's body: a JSON array of operations `{op, path, value}`, each read by the handler
 * (`Links/LinkPatch.ts`), every problem reported. A body that is not an array is 10130.
 */
export const UpdateLink = coded(10130)(
  Schema.Array(
    Schema.Unknown.annotations({ description: "{op: \"replace\" (default), path: \"/alias\" | \"/notes\" | \"/notify_on_click\" | \"/url\" | \"/delete_on\" | \"/archive_on\", value}" })
  )
)

export class LinkCreated extends Schema.Class<LinkCreated>("LinkCreated")({
  objects: Schema.Array(Link),
  new_link: Schema.Boolean
}) {}

export class LinkList extends Schema.Class<LinkList>("LinkList")({
  objects: Schema.Array(Link)
}) {}

export class ValidatedUrl extends Schema.Class<ValidatedUrl>("ValidatedUrl")({
  objects: Schema.Array(Schema.Struct({ url: Schema.String }))
}) {}

export class LinksApi extends HttpApiGroup.make("links")
  .add(
    HttpApiEndpoint.post("validate", "/links/validate")
      .setPayload(Schema.Struct({ url: required(Schema.Unknown.annotations({ description: "the long URL, URL-encoded or plain" }), 10100) }))
      .addSuccess(ValidatedUrl)
      .annotate(OpenApi.Description, "E5: whether a long URL is acceptable, and its normalised form")
  )
  .add(
    HttpApiEndpoint.post("create")`/${createDomainId}/links`
      .setPayload(CreateLink)
      .addSuccess(LinkCreated)
      .annotate(OpenApi.Description, "E4: create a link (or return the caller's existing one with dupe_check)")
  )
  .add(
    HttpApiEndpoint.get("byAlias")`/${domainId}/links/exists`
      .setUrlParams(Schema.Struct({ alias: Schema.optional(Schema.String) }))
      .addSuccess(LinkList)
      .annotate(OpenApi.Description, "E13: a link by alias, ignoring case")
  )
  .add(
    HttpApiEndpoint.get("qr")`/${domainId}/links/${linkId}/qr`
      .setUrlParams(Schema.Struct({ format: Schema.optional(coded(10600)(QrFormat)) }))
      .addSuccess(Schema.Uint8ArrayFromSelf.pipe(HttpApiSchema.withEncoding({ kind: "Uint8Array", contentType: "image/png" })))
      .annotate(OpenApi.Description, "E14: the link's QR code (png by default, svg or eps), encoding short_link?qr=1")
  )
  .add(
    HttpApiEndpoint.get("byId")`/${domainId}/links/${linkId}`
      .addSuccess(LinkList)
      .annotate(OpenApi.Description, "E11: a link by id")
  )
  .add(
    HttpApiEndpoint.patch("update")`/${domainId}/links/${linkId}`
      .setPayload(UpdateLink)
      .addSuccess(LinkList)
      .annotate(
        OpenApi.Description,
        "E12: replace some of a link's fields, all or none: 1-6 operations {op: replace, path, value} with path " +
          "/alias, /notes, /notify_on_click, /url, /delete_on or /archive_on"
      )
  )
  .middleware(Authentication) {}
