import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth/Authentication.ts"

export class ErrorCodeEntry extends Schema.Class<ErrorCodeEntry>("ErrorCodeEntry")({
  code: Schema.Int,
  description: Schema.String,
  message: Schema.String
}) {}

export class ErrorCodesApi extends HttpApiGroup.make("errorCodes")
  .annotate(OpenApi.Description, "The error catalogue (E31)")
  .add(
    HttpApiEndpoint.get("list", "/error_codes")
      .addSuccess(Schema.Struct({ objects: Schema.Array(ErrorCodeEntry) }))
      .annotate(OpenApi.Summary, "E31 List the error codes").annotate(OpenApi.Description, "E31: every error code the service can return")
  )
  .middleware(Authentication) {}
