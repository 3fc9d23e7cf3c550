import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import { Context } from "effect"
import { answers } from "../Platform/Failure.ts"
import { InvalidToken } from "./AuthErrors.ts"
import type { Caller } from "../Accounts/User.ts"
import type { UserRecord } from "../Accounts/UserRepo.ts"

/** The caller of a request and the access token they presented, by its SHA-256 (so that it can be revoked). */
export interface Bearer extends Caller {
  readonly tokenHash: Uint8Array
}

/** The caller the owner of the access token stored under `tokenHash` is. */
export const bearerOf = (user: UserRecord, tokenHash: Uint8Array): Bearer => ({
  userId: user.id,
  accountId: user.account_id,
  email: user.email,
  nickname: user.nickname,
  role: user.role,
  plan: user.plan,
  linkQuota: user.link_quota,
  tokenHash
})

export class CurrentUser extends Context.Tag("CurrentUser")<CurrentUser, Bearer>() {}

/** `Authorization: Bearer <access token>` on every endpoint but E1 and E2; a token it cannot use is a 401 10000. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: answers(InvalidToken),
  provides: CurrentUser,
  security: { bearer: HttpApiSecurity.bearer }
}) {}
