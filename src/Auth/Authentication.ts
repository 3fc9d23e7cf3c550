import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context } from "effect"
import { answers } from "../Platform/Failure.ts"
import { InvalidToken } from "./AuthErrors.ts"
import type { Caller } from "../Accounts/User.ts"

export class CurrentUser extends Context.Tag("CurrentUser")<CurrentUser, Caller>() {}

/** `Authorization: Bearer <access token>` on every endpoint but E1 and E2; a token it cannot use is a 401 10000. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: answers(InvalidToken),
  provides: CurrentUser,
  security: { bearer: HttpApiSecurity.bearer }
}) {}
