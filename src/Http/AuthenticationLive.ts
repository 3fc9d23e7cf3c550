import { Clock, Effect, Layer, Option, Redacted } from "effect"
import { Authentication } from "../Api/Authentication.ts"
import { ApiError } from "../Domain/ApiError.ts"
import type { Caller } from "../Domain/User.ts"
import { UserRepo } from "../Repos/UserRepo.ts"
import { accessTokenHash } from "../Services/TokenStore.ts"
import { ChangeFeed } from "../Sql/ChangeFeed.ts"
import { orDieOnInfrastructure } from "./Infrastructure.ts"

/** Tokens are 43 characters; anything much longer is refused without a query. */
const MAX_TOKEN_LENGTH = 128
/** Token owners kept in memory; past this the oldest entry goes. */
const CACHED_TOKENS = 10_000
/** How long a cached owner is trusted without a word from the database, as a backstop. */
const CACHE_SECONDS = 60

interface Cached {
  readonly caller: Caller
  readonly expires: number
  readonly cachedAt: number
}

/**
 * Bearer tokens, checked against the database once and then from memory until they expire. Any
 * change to tokens, users or accounts (announced by `sql/0006_auth_announce.sql`, by this instance
 * before the changing statement returns, by others within milliseconds) empties the cache.
 */
export const AuthenticationLive = Layer.scoped(
  Authentication,
  Effect.gen(function* () {
    const users = yield* UserRepo
    const cache = new Map<string, Cached>()
    let generation = 0
    const forget = () => {
      generation++
      cache.clear()
    }
    yield* (yield* ChangeFeed).subscribe({
      onChange: (payload) => {
        if (payload === "auth") forget()
      },
      onReset: forget
    })
    return {
      bearer: (bearer) =>
        Effect.gen(function* () {
          const token = Redacted.value(bearer)
          if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return yield* ApiError.of(10000)
          const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          const hash = accessTokenHash(token)
          const key = hash.toString("hex")
          const cached = cache.get(key)
          if (cached !== undefined && cached.expires > now && cached.cachedAt + CACHE_SECONDS > now) return cached.caller
          const started = generation
          const found = yield* users.findByAccessToken({ hash, now })
          if (Option.isNone(found)) return yield* ApiError.of(10000)
          const { id, account_id, email, nickname, role, plan, link_quota } = found.value.user
          const caller: Caller = { userId: id, accountId: account_id, email, nickname, role, plan, linkQuota: link_quota }
          // An answer read before a change was announced must not outlive it.
          if (started === generation) {
            cache.delete(key)
            if (cache.size >= CACHED_TOKENS) cache.delete(cache.keys().next().value ?? key)
            cache.set(key, { caller, expires: found.value.expires, cachedAt: now })
          }
          return caller
        }).pipe(orDieOnInfrastructure)
    }
  })
)
