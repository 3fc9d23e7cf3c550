import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { ApiError, ErrorItem } from "../Platform/ApiError.ts"
import { credentialText } from "./AuthApi.ts"
import { CurrentUser } from "./Authentication.ts"
import type { InvalidCredentials } from "./AuthErrors.ts"
import { Sessions } from "./Sessions.ts"
import { ClientNetwork } from "../Platform/ClientIp.ts"
import type { Invalid } from "../Platform/Coded.ts"

/**
 * A refused login's answer carries `success: 0` beside its error, like the real API's. The edge
 * writes that field for an `ApiError` only, so this one failure is handed to it as one.
 */
const refused = (failure: InvalidCredentials) =>
  new ApiError({ status: 401, errors: [new ErrorItem({ code: failure.code, message: failure.message })], success: 0 })

const optionalText = (value: string | Invalid | undefined) => (value === undefined ? undefined : credentialText(value))

export const AuthHttpLive = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    return handlers
      .handle("validateLogin", ({ payload }) =>
        Effect.flatMap(ClientNetwork, (network) => sessions.validateLogin(credentialText(payload.email), credentialText(payload.password), network)).pipe(
          Effect.map((user) => ({ success: 1 as const, user })),
          Effect.catchTag("InvalidCredentials", refused)
        )
      )
      .handle("accessToken", ({ payload }) =>
        Effect.flatMap(ClientNetwork, (network) =>
          sessions.accessToken({
            email: credentialText(payload.email),
            password: optionalText(payload.password),
            refreshToken: optionalText(payload.refresh_token),
            network
          })
        ).pipe(
          Effect.map((session) => ({ success: 1 as const, user: session.user, access_token: session.accessToken, expires: session.expires })),
          Effect.catchTag("InvalidCredentials", refused)
        )
      )
      .handle("revokeAccessToken", () =>
        Effect.flatMap(CurrentUser, (caller) => sessions.revokeAccessToken(caller.tokenHash)).pipe(Effect.as({ success: 1 as const }))
      )
  })
)
