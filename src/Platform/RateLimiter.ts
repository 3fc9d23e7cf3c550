import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import { Redis } from "ioredis"
import { AppConfig } from "../Config.ts"

/** A fixed one-second window of at most `limit` calls per key (RATE_LIMIT_PER_SECOND per client network). */
export class RateLimiter extends Context.Tag("RateLimiter")<
  RateLimiter,
  {
    /** Counts one call of `key` and tells whether it is within the limit. */
    readonly consume: (key: string) => Effect.Effect<boolean>
  }
>() {
  /** In-process counting: one instance's view. */
  static readonly layerMemory = (limit: number) =>
    Layer.sync(RateLimiter, () => {
      const window = memoryWindow(limit)
      return { consume: (key) => Effect.map(Clock.currentTimeMillis, (now) => window(key, now)) }
    })

  /**
   * Counting in Redis, shared by every instance. When Redis does not answer within 250 ms the
   * in-process window decides, so an outage of Redis never stops the API.
   */
  static readonly layerRedis = (url: Redacted.Redacted<string>, limit: number) =>
    Layer.scoped(
      RateLimiter,
      Effect.gen(function* () {
        const redis = yield* Effect.acquireRelease(
          Effect.sync(
            () =>
              new Redis(Redacted.value(url), {
                enableOfflineQueue: false,
                maxRetriesPerRequest: 0,
                connectTimeout: 1000,
                commandTimeout: 250,
                lazyConnect: false
              })
          ),
          // `quit` fails while Redis is unreachable and leaves ioredis reconnecting for ever.
          (redis) =>
            Effect.promise(async () => {
              if (redis.status === "ready") await redis.quit().catch(() => undefined)
            }).pipe(
              Effect.ensuring(Effect.sync(() => redis.disconnect()))
            )
        )
        let lastWarning = 0
        redis.on("error", () => undefined)
        const fallback = memoryWindow(limit)
        return {
          consume: (key) =>
            Effect.gen(function* () {
              const now = yield* Clock.currentTimeMillis
              const second = Math.floor(now / 1000)
              const redisKey = `links:rl:${second}:${key}`
              const count = yield* Effect.tryPromise(() =>
                redis
                  .multi()
                  .incr(redisKey)
                  .expire(redisKey, 2)
                  .exec()
                  .then((replies) => Number(replies?.[0]?.[1]))
              ).pipe(Effect.timeout(250), Effect.option)
              if (Option.isSome(count) && Number.isFinite(count.value)) return count.value <= limit
              if (now - lastWarning > 10_000) {
                lastWarning = now
                yield* Effect.logWarning("Redis rate limiter unavailable; counting in process")
              }
              return fallback(key, now)
            })
        }
      })
    )

  static readonly layer = Layer.unwrapEffect(
    Effect.map(AppConfig, (config) =>
      Option.match(config.redisUrl, {
        onNone: () => RateLimiter.layerMemory(config.rateLimitPerSecond),
        onSome: (url) => RateLimiter.layerRedis(url, config.rateLimitPerSecond)
      })
    )
  )
}

/** Counts per key for the current second; the previous second's map is dropped whole. */
const memoryWindow = (limit: number) => {
  let second = -1
  let counts = new Map<string, number>()
  return (key: string, now: number): boolean => {
    const current = Math.floor(now / 1000)
    if (current !== second) {
      second = current
      counts = new Map()
    }
    const count = (counts.get(key) ?? 0) + 1
    counts.set(key, count)
    return count <= limit
  }
}
