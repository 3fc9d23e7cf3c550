import { Effect, Redacted } from "effect"
import { Redis } from "ioredis"

/**
 * A Redis connection for the life of the scope that never queues a command: one that cannot be sent
 * or is not answered within 250 ms fails at once. Reconnects after 0.5 s, then twice as long each
 * time, at most every 30 s. Connection errors are left to the commands that fail.
 */
export const scopedRedis = (url: Redacted.Redacted<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const redis = new Redis(Redacted.value(url), {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        connectTimeout: 1000,
        commandTimeout: 250,
        lazyConnect: false,
        retryStrategy: (attempts: number) => Math.min(500 * 2 ** Math.min(attempts - 1, 6), 30_000)
      })
      redis.on("error", () => undefined)
      return redis
    }),
    // `quit` fails while Redis is unreachable and leaves ioredis reconnecting for ever.
    (redis) =>
      Effect.promise(async () => {
        if (redis.status === "ready") await redis.quit().catch(() => undefined)
      }).pipe(Effect.ensuring(Effect.sync(() => redis.disconnect())))
  )

/**
 * Waits until `redis` is connected, at most `ms`: commands are never queued, so those sent while it
 * connects would fail (and be answered without Redis).
 */
export const untilReady = (redis: Redis, ms: number) =>
  Effect.async<void>((resume) => {
    if (redis.status === "ready") return resume(Effect.void)
    const ready = () => {
      clearTimeout(timer)
      redis.off("ready", ready)
      resume(Effect.void)
    }
    const timer = setTimeout(ready, ms)
    redis.once("ready", ready)
    return Effect.sync(() => {
      clearTimeout(timer)
      redis.off("ready", ready)
    })
  })
