import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Domain } from "./Domain.ts"
import { ListPage, Meta } from "../Platform/Pagination.ts"
import { Authentication } from "../Auth/Authentication.ts"
import { coded, documentedInteger, PathId, required } from "../Platform/Coded.ts"
import { answers, answersInvalidInput } from "../Platform/Failure.ts"
import {
  DomainExists,
  DomainNotFound,
  UpdateOperationUnsupported,
  UpdatePathUnsupported,
  UpdateValueInvalid
} from "./DomainErrors.ts"
import { NotAccountAdmin } from "../Accounts/AccountErrors.ts"
import { BodyTimeout, BodyTooLarge } from "../Platform/ApiError.ts"

const domainId = HttpApiSchema.param("domain_id", PathId(10101))

export class DomainList extends Schema.Class<DomainList>("DomainList")({
  objects: Schema.Array(Domain),
  meta: Meta
}) {}

const NullableText = Schema.NullOr(Schema.String)

export const CreateDomain = Schema.Struct({
  domain: required(coded(10400)(Schema.String), 10400),
  default: Schema.optional(coded(10407)(Schema.Boolean)),
  url_404: Schema.optional(coded(10402)(NullableText)),
  homepage: Schema.optional(coded(10403)(NullableText))
}).annotations({ parseOptions: { errors: "all" } })

export const UpdateDomain = Schema.Struct({
  op: required(coded(10404)(Schema.String), 10404),
  path: required(coded(10405)(Schema.String), 10405),
  value: Schema.optional(coded(10406)(NullableText))
}).annotations({ parseOptions: { errors: "all" } })

export class DomainsApi extends HttpApiGroup.make("domains")
  .annotate(OpenApi.Description, "Short domains (E3, E7-E10, D1)")
  .add(
    HttpApiEndpoint.get("list", "/domains")
      .setUrlParams(
        Schema.Struct({
          page: Schema.optional(documentedInteger(1, 1_000_000)(ListPage)),
          domain_name: Schema.optional(Schema.String)
        })
      )
      .addSuccess(DomainList)
      .addError(answers(DomainNotFound))
      .addError(answersInvalidInput(10408, 10153))
      .annotate(OpenApi.Summary, "E3, E8 List domains, or find one by name").annotate(OpenApi.Description, "E3: the caller's active domains, or E8 with domain_name: one domain by name")
  )
  .add(
    HttpApiEndpoint.get("byId")`/domains/${domainId}`
      .addSuccess(DomainList)
      .addError(answers(DomainNotFound))
      .annotate(OpenApi.Summary, "E7 Get a domain").annotate(OpenApi.Description, "E7: one domain by id")
  )
  .add(
    HttpApiEndpoint.post("create", "/domains")
      .setPayload(CreateDomain)
      .addError(BodyTooLarge)
      .addError(BodyTimeout)
      .addSuccess(DomainList)
      .addError(answers(DomainExists))
      .addError(answers(NotAccountAdmin))
      .addError(answersInvalidInput(10400, 10402, 10403, 10407, 10153))
      .annotate(OpenApi.Summary, "E9 Create a domain").annotate(OpenApi.Description, "E9: create a domain (account admins)")
  )
  .add(
    HttpApiEndpoint.patch("update")`/domains/${domainId}`
      .setPayload(UpdateDomain)
      .addError(BodyTooLarge)
      .addError(BodyTimeout)
      .addSuccess(DomainList)
      .addError(answers(DomainNotFound))
      .addError(answers(NotAccountAdmin))
      .addError(answers(UpdateOperationUnsupported))
      .addError(answers(UpdatePathUnsupported))
      .addError(answers(UpdateValueInvalid))
      .addError(answersInvalidInput(10404, 10405, 10406, 10153))
      .annotate(OpenApi.Summary, "E10 Update a domain").annotate(OpenApi.Description, "E10: replace a domain's status, homepage or url_404 (account admins)")
  )
  .add(
    HttpApiEndpoint.del("remove")`/domains/${domainId}`
      .addSuccess(Schema.Struct({}))
      .addError(answers(DomainNotFound))
      .addError(answers(NotAccountAdmin))
      .annotate(OpenApi.Summary, "D1 Delete a domain").annotate(
        OpenApi.Description,
        "D1: delete a domain and all its links (account admins); its name can be registered again, its clicks stay on the account's records"
      )
  )
  .middleware(Authentication) {}
