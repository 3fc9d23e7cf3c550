import { Effect, Layer, Option, Redacted } from "effect"
import { Authentication } from "../Api/Authentication.ts"
import { ApiError } from "../Domain/ApiError.ts"
import { TokenStore } from "../Services/TokenStore.ts"
import { UserRepo } from "../Repos/UserRepo.ts"

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const tokens = yield* TokenStore
    const users = yield* UserRepo
    return {
      bearer: (token) =>
        Effect.gen(function* () {
          const userId = yield* tokens.authenticate(Redacted.value(token))
          if (Option.isNone(userId)) return yield* ApiError.of(10000)
          const user = yield* users.findById(userId.value)
          if (Option.isNone(user)) return yield* ApiError.of(10000)
          const { id, account_id, email, nickname, role, plan } = user.value
          return { userId: id, accountId: account_id, email, nickname, role, plan }
        }).pipe(Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die }))
    }
  })
)
