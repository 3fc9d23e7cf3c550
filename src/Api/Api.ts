import { HttpApi, OpenApi } from "@effect/platform"
import { ApiErrorBodies } from "../Domain/ApiError.ts"
import { AnalyticsApi } from "./AnalyticsApi.ts"
import { AuthApi } from "./AuthApi.ts"
import { DomainsApi } from "./DomainsApi.ts"
import { ErrorCodesApi } from "./ErrorCodesApi.ts"
import { LinkSearchApi } from "./LinkSearchApi.ts"
import { LinksApi } from "./LinksApi.ts"
import { TagsApi } from "./TagsApi.ts"
import { OperationsApi } from "./OperationsApi.ts"

/** Version 4 of the link API (CONTRACT §2), plus the operational endpoints (§12). */
export class Api extends HttpApi.make("links")
  .add(AuthApi.prefix("/api/v4"))
  .add(DomainsApi.prefix("/api/v4"))
  .add(ErrorCodesApi.prefix("/api/v4"))
  .add(LinksApi.prefix("/api/v4"))
  .add(LinkSearchApi.prefix("/api/v4"))
  .add(TagsApi.prefix("/api/v4"))
  .add(AnalyticsApi.prefix("/api/v4"))
  .add(OperationsApi)
  .addError(ApiErrorBodies[400])
  .addError(ApiErrorBodies[401])
  .addError(ApiErrorBodies[403])
  .addError(ApiErrorBodies[404])
  .addError(ApiErrorBodies[413])
  .addError(ApiErrorBodies[500])
  .addError(ApiErrorBodies[503])
  .annotate(OpenApi.Title, "Link Shortening Service API")
  .annotate(OpenApi.Version, "4") {}
