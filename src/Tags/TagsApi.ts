import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Tag } from "./Tag.ts"
import { TagDomainNotFound, TagNameExists, UtmTemplateDomainNotFound } from "./TagErrors.ts"
import { UtmTemplate } from "./UtmTemplate.ts"
import { Authentication } from "../Auth/Authentication.ts"
import { coded, documentedInteger, required } from "../Platform/Coded.ts"
import { answers, answersInvalidInput } from "../Platform/Failure.ts"
import { BodyTimeout, BodyTooLarge } from "../Platform/ApiError.ts"

const positiveId = <I>(schema: Schema.Schema<number, I>) =>
  schema.pipe(Schema.int(), Schema.positive(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER))

/** A domain id in a query string. */
const DomainIdParam = positiveId(Schema.NumberFromString).pipe(documentedInteger(1, Number.MAX_SAFE_INTEGER))
/** A domain id in a body: a positive integer, or its decimal string. */
const DomainIdInput = positiveId(Schema.Union(Schema.Number, Schema.NumberFromString))

export class TagList extends Schema.Class<TagList>("TagList")({ objects: Schema.Array(Tag) }) {}
export class UtmTemplateList extends Schema.Class<UtmTemplateList>("UtmTemplateList")({
  objects: Schema.Array(UtmTemplate)
}) {}

export const CreateTag = Schema.Struct({
  domain_id: required(coded(10301)(DomainIdInput), 10300),
  name: required(coded(10304)(Schema.String), 10303),
  shared: Schema.optional(coded(10305)(Schema.Boolean)),
  notes: Schema.optional(coded(10306)(Schema.String))
}).annotations({ parseOptions: { errors: "all" } })

/** T1, T2 (tags) and E15 (UTM templates): resources of a domain named in the query or body. */
export class TagsApi extends HttpApiGroup.make("tags")
  .annotate(OpenApi.Description, "Tags (T1, T2) and UTM templates (E15)")
  .add(
    HttpApiEndpoint.get("listTags", "/tags")
      .setUrlParams(
        Schema.Struct({
          domain_id: required(coded(10301)(DomainIdParam), 10300),
          search: Schema.optional(coded(10302)(Schema.String.pipe(Schema.maxLength(100))))
        }).annotations({ parseOptions: { errors: "all" } })
      )
      .addSuccess(TagList)
      .addError(answers(TagDomainNotFound))
      .addError(answersInvalidInput(10300, 10301, 10302, 10153))
      .annotate(OpenApi.Summary, "T1 List tags").annotate(OpenApi.Description, "T1: the domain's tags visible to the caller (shared ones and their own), by name")
  )
  .add(
    HttpApiEndpoint.post("createTag", "/tags")
      .setPayload(CreateTag)
      .addError(BodyTooLarge)
      .addError(BodyTimeout)
      .addSuccess(TagList)
      .addError(answers(TagDomainNotFound))
      .addError(answers(TagNameExists))
      .addError(answersInvalidInput(10300, 10301, 10303, 10304, 10305, 10306, 10307, 10153))
      .annotate(OpenApi.Summary, "T2 Create a tag").annotate(OpenApi.Description, "T2: create a tag on a domain; names are unique per domain ignoring case")
  )
  .add(
    HttpApiEndpoint.get("listUtmTemplates", "/utm_templates")
      .setUrlParams(Schema.Struct({ domain_id: required(coded(10201)(DomainIdParam), 10200) }))
      .addSuccess(UtmTemplateList)
      .addError(answers(UtmTemplateDomainNotFound))
      .addError(answersInvalidInput(10200, 10201, 10153))
      .annotate(OpenApi.Summary, "E15 List UTM templates").annotate(OpenApi.Description, "E15: the UTM templates of a domain")
  )
  .middleware(Authentication) {}
