import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth/Authentication.ts"
import { DomainNotFound } from "../Domains/DomainErrors.ts"
import { documentedInteger, PathId, required } from "../Platform/Coded.ts"
import { answers, answersInvalidInput } from "../Platform/Failure.ts"
import { ListPage, Meta } from "../Platform/Pagination.ts"
import { Group } from "./Group.ts"

export class GroupList extends Schema.Class<GroupList>("GroupList")({
  objects: Schema.Array(Group),
  meta: Meta
}) {}

/** G1: the groups of a domain the caller sees. */
export class GroupsApi extends HttpApiGroup.make("groups")
  .annotate(OpenApi.Description, "Groups of links (G1)")
  .add(
    HttpApiEndpoint.get("listGroups", "/groups")
      .setUrlParams(
        Schema.Struct({
          // 10101 is 404 in the catalogue, for a domain the caller does not have; a domain_id that is no id is 400.
          domain_id: required(PathId(10101, 400), 10101, 400),
          page: Schema.optional(documentedInteger(1, 1_000_000)(ListPage))
        }).annotations({ parseOptions: { errors: "all" } })
      )
      .addSuccess(GroupList)
      .addError(answers(DomainNotFound))
      .addError(answersInvalidInput(10101, 10408, 10153))
      .annotate(OpenApi.Summary, "G1 List groups").annotate(OpenApi.Description, "G1: the domain's groups visible to the caller (global ones, their own, those listing them), by id")
  )
  .middleware(Authentication) {}
