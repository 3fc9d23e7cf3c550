import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { documentErrors, InternalError, Unavailable } from "./Platform/ApiError.ts"
import { AnalyticsApi } from "./Analytics/AnalyticsApi.ts"
import { AuthApi } from "./Auth/AuthApi.ts"
import { ExportApi } from "./Export/ExportApi.ts"
import { DomainsApi } from "./Domains/DomainsApi.ts"
import { ErrorCodesApi } from "./Operations/ErrorCodesApi.ts"
import { LinkSearchApi } from "./Links/LinkSearchApi.ts"
import { LinksApi } from "./Links/LinksApi.ts"
import { TagsApi } from "./Tags/TagsApi.ts"
import { GroupsApi } from "./Groups/GroupsApi.ts"
import { OperationsApi } from "./Operations/OperationsApi.ts"
import { UsersApi } from "./Accounts/UsersApi.ts"
import { WebhooksApi } from "./Webhooks/WebhooksApi.ts"
import { openApiV3 } from "./V3/V3OpenApi.ts"
import { SettingsApi } from "./SmartLinks/SettingsApi.ts"

/**
 * Version 4 of the link API, plus the operational endpoints (/healthz, /readyz, /metrics). Each
 * operation declares the errors it can answer: its handler's failures where it is defined, the
 * edge's here (every operation under /api can be rate limited or unavailable, 503; any can fail
 * unexpectedly, 500) and in the groups (401 where a token is needed, 408 and 413 where a body is
 * read). The document lists each error response's catalogue codes (`documentErrors`).
 */
export class Api extends HttpApi.make("links")
  .add(AuthApi.prefix("/api/v4").addError(Unavailable))
  .add(UsersApi.prefix("/api/v4").addError(Unavailable))
  .add(DomainsApi.prefix("/api/v4").addError(Unavailable))
  .add(ErrorCodesApi.prefix("/api/v4").addError(Unavailable))
  .add(LinksApi.prefix("/api/v4").addError(Unavailable))
  .add(LinkSearchApi.prefix("/api/v4").addError(Unavailable))
  .add(TagsApi.prefix("/api/v4").addError(Unavailable))
  .add(GroupsApi.prefix("/api/v4").addError(Unavailable))
  .add(AnalyticsApi.prefix("/api/v4").addError(Unavailable))
  .add(ExportApi.prefix("/api/v4").addError(Unavailable))
  .add(WebhooksApi.prefix("/api/v4").addError(Unavailable))
  .add(SettingsApi.prefix("/api/v4").addError(Unavailable))
  .add(OperationsApi)
  .addError(InternalError)
  .annotate(OpenApi.Title, "Link Shortening Service API")
  .annotate(OpenApi.Version, "4")
  .annotate(OpenApi.Servers, [{ url: "/", description: "This service (paths carry their version: /api/v4, /api/v3)" }])
  .annotate(OpenApi.Transform, documentErrors) {}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Version 3's docs page (/api/v3/docs): an API of no endpoints whose OpenAPI document is version 3's,
 * version 4's mapped by the differences of version 3 (`V3/V3OpenApi.ts`), as /api/v3/openapi.json.
 */
export const ApiV3Docs = HttpApi.make("linksV3").annotate(OpenApi.Transform, () => {
  const v3 = openApiV3(OpenApi.fromApi(Api))
  return isRecord(v3) ? v3 : {}
})
