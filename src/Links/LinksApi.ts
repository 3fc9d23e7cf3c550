import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Link } from "./Link.ts"
import { Authentication } from "../Auth/Authentication.ts"
import { QR_CONTENT_TYPES, QrFormat } from "./QrRenderer.ts"
import { isPlainObject } from "./InputValues.ts"
import { coded, PathId } from "../Platform/Coded.ts"
import { CreateLink, UpdateLink, ValidateLink } from "./LinkFields.ts"
import { answers, answersInvalidInput } from "../Platform/Failure.ts"
import { DomainNotFound } from "../Domains/DomainErrors.ts"
import { AliasTaken, AliasTakenOnUpdate, LinkNotFound, NoFreeAlias, QuotaReached } from "./LinkErrors.ts"
import { BodyTimeout, BodyTooLarge } from "../Platform/ApiError.ts"

/** On E4 a non-numeric domain is invalid input (400); elsewhere an id that is not one is not found (404). */
const createDomainId = HttpApiSchema.param("domain_id", PathId(10101, 400))
const domainId = HttpApiSchema.param("domain_id", PathId(10101))
const linkId = HttpApiSchema.param("link_id", PathId(10150))

/** What E4's body can be refused for, by decoding (10101: a domain id that is none) or by the link rules. */
const CREATE_PROBLEMS = [
  10100, 10101, 10102, 10103, 10104, 10105, 10106, 10107, 10108, 10109, 10110, 10111, 10112, 10113, 10114, 10115, 10116, 10153
] as const

/** What E12's operations can be refused for: the patch rules, the alias taken, the 404 check of a new url. */
const UPDATE_PROBLEMS = [10111, 10112, 10113, 10114, 10116, 10130, 10131, 10132, 10133, 10134, 10135, 10140, 10153] as const

/** E14's answer in the document: the image in each format it is asked for (the framework names one content type). */
const qrImages = (operation: Record<string, unknown>): Record<string, unknown> => {
  const responses = isPlainObject(operation.responses) ? operation.responses : {}
  const ok = isPlainObject(responses["200"]) ? responses["200"] : {}
  const image = { schema: { type: "string", format: "binary" } }
  const content = Object.fromEntries(Object.values(QR_CONTENT_TYPES).map((type) => [type, image]))
  return { ...operation, responses: { ...responses, "200": { ...ok, description: "The QR code: png, svg or eps as format asks", content } } }
}

export class LinkCreated extends Schema.Class<LinkCreated>("LinkCreated")({
  objects: Schema.Array(Link),
  /** 1 when the link was created, 0 when dupe_check returned an existing one (an integer, as the real API types it). */
  new_link: Schema.Literal(1, 0)
}) {}

export class LinkList extends Schema.Class<LinkList>("LinkList")({
  objects: Schema.Array(Link)
}) {}

export class ValidatedUrl extends Schema.Class<ValidatedUrl>("ValidatedUrl")({
  objects: Schema.Array(Schema.Struct({ url: Schema.String }))
}) {}

export class LinksApi extends HttpApiGroup.make("links")
  .annotate(OpenApi.Description, "Links: create, validate, read, update and QR codes (E4, E5, E11-E14)")
  .add(
    HttpApiEndpoint.post("validate", "/links/validate")
      .setPayload(ValidateLink)
      .addError(BodyTooLarge)
      .addError(BodyTimeout)
      .addSuccess(ValidatedUrl)
      .addError(answersInvalidInput(10100, 10153))
      .annotate(OpenApi.Summary, "E5 Validate a long URL").annotate(OpenApi.Description, "E5: whether a long URL is acceptable, and its normalised form")
  )
  .add(
    HttpApiEndpoint.post("create")`/${createDomainId}/links`
      .setPayload(CreateLink)
      .addError(BodyTooLarge)
      .addError(BodyTimeout)
      .addSuccess(LinkCreated)
      .addError(answers(DomainNotFound))
      .addError(answers(AliasTaken))
      .addError(answers(QuotaReached))
      .addError(answers(NoFreeAlias))
      .addError(answers(LinkNotFound))
      .addError(answersInvalidInput(...CREATE_PROBLEMS))
      .annotate(OpenApi.Summary, "E4 Create a link").annotate(OpenApi.Description, "E4: create a link (or return the caller's existing one with dupe_check)")
  )
  .add(
    HttpApiEndpoint.get("byAlias")`/${domainId}/links/exists`
      .setUrlParams(Schema.Struct({ alias: Schema.optional(Schema.String) }))
      .addSuccess(LinkList)
      .addError(answers(DomainNotFound))
      .addError(answers(LinkNotFound))
      .addError(answersInvalidInput(10102, 10153))
      .annotate(OpenApi.Summary, "E13 Get a link by alias").annotate(OpenApi.Description, "E13: a link by alias, ignoring case")
  )
  .add(
    HttpApiEndpoint.get("qr")`/${domainId}/links/${linkId}/qr`
      .setUrlParams(Schema.Struct({ format: Schema.optional(coded(10600)(QrFormat)) }))
      .addSuccess(Schema.Uint8ArrayFromSelf.pipe(HttpApiSchema.withEncoding({ kind: "Uint8Array", contentType: "image/png" })))
      .addError(answers(DomainNotFound))
      .addError(answers(LinkNotFound))
      .addError(answersInvalidInput(10600))
      .annotate(OpenApi.Summary, "E14 Get a link's QR code")
      .annotate(OpenApi.Transform, qrImages).annotate(OpenApi.Description, "E14: the link's QR code (png by default, svg or eps), encoding short_link?qr=1")
  )
  .add(
    HttpApiEndpoint.get("byId")`/${domainId}/links/${linkId}`
      .addSuccess(LinkList)
      .addError(answers(DomainNotFound))
      .addError(answers(LinkNotFound))
      .annotate(OpenApi.Summary, "E11 Get a link").annotate(OpenApi.Description, "E11: a link by id")
  )
  .add(
    HttpApiEndpoint.patch("update")`/${domainId}/links/${linkId}`
      .setPayload(UpdateLink)
      .addError(BodyTooLarge)
      .addError(BodyTimeout)
      .addSuccess(LinkList)
      .addError(answers(DomainNotFound))
      .addError(answers(LinkNotFound))
      .addError(answers(AliasTakenOnUpdate))
      .addError(answersInvalidInput(...UPDATE_PROBLEMS))
      .annotate(OpenApi.Summary, "E12 Update a link").annotate(
        OpenApi.Description,
        "E12: replace some of a link's fields, all or none: 1-6 operations {op: replace, path, value} with path " +
          "/alias, /notes, /notify_on_click, /url, /delete_on or /archive_on"
      )
  )
  .middleware(Authentication) {}
