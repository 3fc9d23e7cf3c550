import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { AccountUser } from "./AccountUser.ts"
import { NotAccountAdmin } from "./AccountErrors.ts"
import { Authentication } from "../Auth/Authentication.ts"
import { documentedInteger } from "../Platform/Coded.ts"
import { answers, answersInvalidInput } from "../Platform/Failure.ts"
import { ListPage, Meta } from "../Platform/Pagination.ts"

export class UserList extends Schema.Class<UserList>("UserList")({
  objects: Schema.Array(AccountUser),
  meta: Meta
}) {}

export class UsersApi extends HttpApiGroup.make("users")
  .annotate(OpenApi.Description, "The users of the caller's account (U1)")
  .add(
    HttpApiEndpoint.get("list", "/users")
      .setUrlParams(Schema.Struct({ page: Schema.optional(documentedInteger(1, 1_000_000)(ListPage)) }))
      .addSuccess(UserList)
      .addError(answers(NotAccountAdmin))
      .addError(answersInvalidInput(10408, 10153))
      .annotate(OpenApi.Summary, "U1 List the account's users").annotate(
        OpenApi.Description,
        "U1: the users of the caller's account with their domains and their role on each (account admins only)"
      )
  )
  .middleware(Authentication) {}
