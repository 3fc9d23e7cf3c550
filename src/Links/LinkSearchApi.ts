import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Link } from "./Link.ts"
import { Meta } from "../Platform/Pagination.ts"
import { Authentication } from "../Auth/Authentication.ts"
import { coded, documentedInteger, PathId } from "../Platform/Coded.ts"
import { answers, answersInvalidInput } from "../Platform/Failure.ts"
import { DomainNotFound } from "../Domains/DomainErrors.ts"
import { NotDomainAdmin } from "./LinkErrors.ts"
import { GroupNotFound } from "../Groups/GroupErrors.ts"

const domainId = HttpApiSchema.param("domain_id", PathId(10101))

const whole = (code: 10120 | 10500 | 10501) =>
  documentedInteger(0, 253_402_300_799)(coded(code)(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative(), Schema.lessThanOrEqualTo(253_402_300_799))))

export const SearchParams = Schema.Struct({
  keyword: Schema.optional(coded(10121)(Schema.String.pipe(Schema.maxLength(200)))),
  page: Schema.optional(documentedInteger(1, 1_000_000)(coded(10120)(Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), Schema.lessThanOrEqualTo(1_000_000))))),
  url: Schema.optional(coded(10122)(Schema.String.pipe(Schema.maxLength(4096)))),
  order: Schema.optional(coded(10123)(Schema.Literal("oldest", "latest"))),
  users: Schema.optional(Schema.String),
  tag: Schema.optional(Schema.String),
  group_id: Schema.optional(PathId(10160, 400)),
  from_unix: Schema.optional(whole(10500)),
  to_unix: Schema.optional(whole(10501))
}).annotations({ parseOptions: { errors: "all" } })

export class LinkSearchResult extends Schema.Class<LinkSearchResult>("LinkSearchResult")({
  total: Schema.Int,
  count: Schema.Int,
  click_count: Schema.Int,
  objects: Schema.Array(Link),
  meta: Meta
}) {}

export class LinkSearchApi extends HttpApiGroup.make("linkSearch")
  .annotate(OpenApi.Description, "Searching links (E6)")
  .add(
    HttpApiEndpoint.get("search")`/${domainId}/links`
      .setUrlParams(SearchParams)
      .addSuccess(LinkSearchResult)
      .addError(answers(DomainNotFound))
      .addError(answers(NotDomainAdmin))
      .addError(answers(GroupNotFound))
      .addError(answersInvalidInput(10120, 10121, 10122, 10123, 10160, 10500, 10501, 10153))
      .annotate(OpenApi.Summary, "E6 Search links").annotate(
        OpenApi.Description,
        "E6: the caller's links of a domain (all of them with users=all, for its admins), filtered by keyword, url, tag, group and created time"
      )
  )
  .middleware(Authentication) {}
