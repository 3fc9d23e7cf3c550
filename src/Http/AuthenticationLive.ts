import { Clock, Effect, Layer, Option, Redacted } from "effect"
import { Authentication } from "../Api/Authentication.ts"
import { ApiError } from "../Domain/ApiError.ts"
import { UserRepo } from "../Repos/UserRepo.ts"
import { accessTokenHash } from "../Services/TokenStore.ts"
import { orDieOnInfrastructure } from "./Infrastructure.ts"

/** Tokens are 43 characters; anything much longer is refused without a query. */
const MAX_TOKEN_LENGTH = 128

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const users = yield* UserRepo
    return {
      bearer: (bearer) =>
        Effect.gen(function* () {
          const token = Redacted.value(bearer)
          if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return yield* ApiError.of(10000)
          const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          const user = yield* users.findByAccessToken({ hash: accessTokenHash(token), now })
          if (Option.isNone(user)) return yield* ApiError.of(10000)
          const { id, account_id, email, nickname, role, plan, link_quota } = user.value
          return { userId: id, accountId: account_id, email, nickname, role, plan, linkQuota: link_quota }
        }).pipe(orDieOnInfrastructure)
    }
  })
)
