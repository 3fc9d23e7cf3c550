import { Clock, Effect, Layer, Option, Redacted } from "effect"
import { Authentication, type Bearer, bearerOf } from "./Authentication.ts"
import { InvalidToken } from "./AuthErrors.ts"
import { UserRepo } from "../Accounts/UserRepo.ts"
import { accessTokenHash, madeWith, TokenSecret } from "./TokenStore.ts"
import { announcedCache } from "../Sql/AnnouncedCache.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { noteRequestUser } from "../Platform/RequestUser.ts"

/** Tokens are 43 characters; anything much longer is refused without a query. */
const MAX_TOKEN_LENGTH = 128
/** Token owners kept in memory; past this the oldest entry goes. */
const CACHED_TOKENS = 10_000
/** How long a cached owner is trusted without a word from the database, as a backstop. */
const CACHE_SECONDS = 60

interface Cached {
  readonly caller: Bearer
  readonly expires: number
}

/**
 * Bearer tokens, checked against the database once and then from memory until they expire. Any
 * change to tokens, users or accounts (announced by `sql/0006_auth_announce.sql` and `sql/0010`, by
 * this instance before the changing statement returns, by others within milliseconds) empties the
 * cache, so a revoked token (its row deleted) or a disabled user's is refused at once everywhere.
 */
export const AuthenticationLive = Layer.scoped(
  Authentication,
  Effect.gen(function* () {
    const users = yield* UserRepo
    const secret = yield* TokenSecret
    const cache = yield* announcedCache<Cached>({
      size: CACHED_TOKENS,
      seconds: CACHE_SECONDS,
      forgetOn: (payload) => payload === "auth",
      holds: (cached, now) => cached.expires > now
    })
    return {
      bearer: (bearer) =>
        Effect.gen(function* () {
          const token = Redacted.value(bearer)
          if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return yield* InvalidToken.of()
          const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          const hash = accessTokenHash(token)
          const read = Effect.flatMap(users.findByAccessToken({ hash, now }), (found) =>
            Option.match(found, {
              onNone: () => InvalidToken.of(),
              onSome: ({ user, expires, seed }): Effect.Effect<Cached, InvalidToken> =>
                madeWith(secret.current(), seed, token) ? Effect.succeed({ caller: bearerOf(user, hash), expires }) : InvalidToken.of()
            })
          )
          const { caller } = yield* cache.through(hash.toString("hex"), read)
          yield* noteRequestUser(caller.userId)
          return caller
        }).pipe(orDieOnInfrastructure)
    }
  })
)
