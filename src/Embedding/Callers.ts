import { Clock, Effect, Option } from "effect"
import { UserRepo } from "../Accounts/UserRepo.ts"
import { type Bearer, bearerOf } from "../Auth/Authentication.ts"
import { InvalidToken } from "../Auth/AuthErrors.ts"
import { accessTokenHash, madeWith, TokenSecret } from "../Auth/TokenStore.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"

/**
 * The caller an access token stands for, outside a request: what the use cases take as their first
 * argument. Each check reads the database (the API's middleware keeps owners in memory), so a token
 * revoked, expired by `Clock`, of a user disabled since, or made with another token secret, is
 * refused with `InvalidToken` at once.
 */
export class Callers extends Effect.Service<Callers>()("Callers", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const secret = yield* TokenSecret
    const ofAccessToken = (token: string): Effect.Effect<Bearer, InvalidToken> =>
      Effect.gen(function* () {
        const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const hash = accessTokenHash(token)
        const found = yield* users.findByAccessToken({ hash, now })
        if (Option.isNone(found) || !madeWith(secret.current(), found.value.seed, token)) return yield* InvalidToken.of()
        return bearerOf(found.value.user, hash)
      }).pipe(orDieOnInfrastructure)
    return { ofAccessToken } as const
  })
}) {}
