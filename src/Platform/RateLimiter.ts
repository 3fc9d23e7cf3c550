import { Clock, Context, Effect, Either, Layer, Option, Redacted } from "effect"
import { createHash } from "node:crypto"
import { AppConfig } from "../Config.ts"
import { makeOutage } from "./Outage.ts"
import { scopedRedis } from "./RedisClient.ts"

/** Calls per second: per client network (RATE_LIMIT_PER_SECOND), per access token (RATE_LIMIT_PER_TOKEN_PER_SECOND). */
export interface Quotas {
  readonly perNetwork: number
  readonly perToken: number
}

/** Whether a call is within every budget it spends, and the RateLimit header fields to answer it with. */
export interface Verdict {
  readonly allowed: boolean
  readonly headers: Readonly<Record<string, string>>
}

/** Counts one more call of each key in the one-second window of `now`, and answers the counts in order. */
type Counter = (keys: ReadonlyArray<string>, now: number) => Effect.Effect<ReadonlyArray<number>>

/** Fixed one-second windows, one budget per client network and one per presented access token. */
export class RateLimiter extends Context.Tag("RateLimiter")<
  RateLimiter,
  {
    /**
     * Counts one call from `network` (`clientNetwork` of the client IP) and, when a bearer token is
     * presented, one against that token's budget, whether or not the token is valid.
     */
    readonly consume: (network: string, bearer: string | undefined) => Effect.Effect<Verdict>
  }
>() {
  /** In-process counting: one instance's view. */
  static readonly layerMemory = (quotas: Quotas) =>
    Layer.sync(RateLimiter, () => {
      const window = memoryWindow()
      return limiter(quotas, (keys, now) => Effect.succeed(keys.map((key) => window(key, now))))
    })

  /**
   * Counting in Redis, shared by every instance. When Redis does not answer within 250 ms the
   * in-process window decides, so an outage of Redis never stops the API.
   */
  static readonly layerRedis = (url: Redacted.Redacted<string>, quotas: Quotas) =>
    Layer.scoped(
      RateLimiter,
      Effect.gen(function* () {
        const redis = yield* scopedRedis(url)
        const outage = makeOutage("redis", "Redis (rate limits counted in process meanwhile)")
        const fallback = memoryWindow()
        return limiter(quotas, (keys, now) =>
          Effect.gen(function* () {
            const second = Math.floor(now / 1000)
            const redisKeys = keys.map((key) => `links:rl:${second}:${key}`)
            const counts = yield* Effect.tryPromise(() => {
              const multi = redis.multi()
              for (const key of redisKeys) multi.incr(key).expire(key, 2)
              return multi.exec().then((replies) => redisKeys.map((_, i) => Number(replies?.[2 * i]?.[1])))
            }).pipe(
              Effect.timeoutFail({ duration: 250, onTimeout: () => new Error("no answer within 250 ms") }),
              Effect.withSpan("redis MULTI", { kind: "client", attributes: { "db.system.name": "redis", "db.operation.name": "MULTI" } }),
              Effect.either
            )
            if (Either.isRight(counts) && counts.right.every(Number.isFinite)) {
              yield* outage.succeeded
              return counts.right
            }
            yield* outage.failed(Either.isLeft(counts) ? counts.left : new Error("unexpected reply"))
            return keys.map((key) => fallback(key, now))
          })
        )
      })
    )

  static readonly layer = Layer.unwrapEffect(
    Effect.map(AppConfig, (config) => {
      const quotas = { perNetwork: config.rateLimitPerSecond, perToken: config.rateLimitPerTokenPerSecond }
      return Option.match(config.redisUrl, {
        onNone: () => RateLimiter.layerMemory(quotas),
        onSome: (url) => RateLimiter.layerRedis(url, quotas)
      })
    })
  )
}

/**
 * A token's budget is kept under a hash of it, never the token. Unkeyed, so that instances with
 * different TOKEN_SECRETs share it, and prefixed, so that it is not the lookup hash the database holds.
 */
const tokenKey = (bearer: string) => createHash("sha256").update("links rate limit\0").update(bearer).digest("base64url")

const limiter = (quotas: Quotas, count: Counter): Context.Tag.Service<RateLimiter> => ({
  consume: (network, bearer) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const budgets = [{ policy: "net", key: `net:${network}`, quota: quotas.perNetwork }]
      if (bearer !== undefined && bearer !== "") {
        budgets.push({ policy: "token", key: `token:${tokenKey(bearer)}`, quota: quotas.perToken })
      }
      const counts = yield* count(budgets.map((budget) => budget.key), now)
      const standings = budgets.map((budget, i) => ({ ...budget, left: budget.quota - (counts[i] ?? 0) }))
      const closest = standings.reduce((a, b) => (b.left < a.left ? b : a))
      const reset = Math.ceil((1000 - (now % 1000)) / 1000)
      return {
        allowed: standings.every((standing) => standing.left >= 0),
        headers: {
          "ratelimit-policy": standings.map(({ policy, quota }) => `"${policy}";q=${quota};w=1`).join(", "),
          ratelimit: `"${closest.policy}";r=${Math.max(0, closest.left)};t=${reset}`
        }
      }
    })
})

/** Counts per key for the current second; the previous second's map is dropped whole. */
const memoryWindow = () => {
  let second = -1
  let counts = new Map<string, number>()
  return (key: string, now: number): number => {
    const current = Math.floor(now / 1000)
    if (current !== second) {
      second = current
      counts = new Map()
    }
    const count = (counts.get(key) ?? 0) + 1
    counts.set(key, count)
    return count
  }
}
