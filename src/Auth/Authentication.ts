import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context } from "effect"
import { ApiErrorBodies } from "../Platform/ApiError.ts"
import type { Caller } from "../Accounts/User.ts"

export class CurrentUser extends Context.Tag("CurrentUser")<CurrentUser, Caller>() {}

/** `Authorization: Bearer <access token>` on every endpoint but E1 and E2 (CONTRACT §3). */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: ApiErrorBodies[401],
  provides: CurrentUser,
  security: { bearer: HttpApiSecurity.bearer }
}) {}
