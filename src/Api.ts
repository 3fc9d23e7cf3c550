import { HttpApi, OpenApi } from "@effect/platform"
import { ApiErrorBodies } from "./Platform/ApiError.ts"
import { AnalyticsApi } from "./Analytics/AnalyticsApi.ts"
import { AuthApi } from "./Auth/AuthApi.ts"
import { DomainsApi } from "./Domains/DomainsApi.ts"
import { ErrorCodesApi } from "./Operations/ErrorCodesApi.ts"
import { LinkSearchApi } from "./Links/LinkSearchApi.ts"
import { LinksApi } from "./Links/LinksApi.ts"
import { TagsApi } from "./Tags/TagsApi.ts"
import { GroupsApi } from "./Groups/GroupsApi.ts"
import { OperationsApi } from "./Operations/OperationsApi.ts"
import { UsersApi } from "./Accounts/UsersApi.ts"

/** Version 4 of the link API, plus the operational endpoints (/healthz, /readyz, /metrics). */
export class Api extends HttpApi.make("links")
  .add(AuthApi.prefix("/api/v4"))
  .add(UsersApi.prefix("/api/v4"))
  .add(DomainsApi.prefix("/api/v4"))
  .add(ErrorCodesApi.prefix("/api/v4"))
  .add(LinksApi.prefix("/api/v4"))
  .add(LinkSearchApi.prefix("/api/v4"))
  .add(TagsApi.prefix("/api/v4"))
  .add(GroupsApi.prefix("/api/v4"))
  .add(AnalyticsApi.prefix("/api/v4"))
  .add(OperationsApi)
  .addError(ApiErrorBodies[400])
  .addError(ApiErrorBodies[401])
  .addError(ApiErrorBodies[403])
  .addError(ApiErrorBodies[404])
  .addError(ApiErrorBodies[408])
  .addError(ApiErrorBodies[413])
  .addError(ApiErrorBodies[500])
  .addError(ApiErrorBodies[503])
  .annotate(OpenApi.Title, "Link Shortening Service API")
  .annotate(OpenApi.Version, "4") {}
