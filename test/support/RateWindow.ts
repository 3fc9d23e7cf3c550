import { Effect } from "effect"
import { Redis } from "ioredis"
import { randomInt } from "node:crypto"

/** Sleeps until just after the next second starts: a fresh one-second rate-limit window. */
export const nextSecond = Effect.suspend(() => Effect.sleep(1000 - (Date.now() % 1000) + 5))

/**
 * Runs `calls` at the start of a fresh second and makes sure they all happened within it, trying
 * again in a later second when they did not: a fixed window must never straddle two seconds.
 * `calls` should only collect answers; assert on them afterwards.
 */
export const inOneSecond = <A, E, R>(calls: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    for (let attempt = 1; ; attempt++) {
      yield* nextSecond
      const second = Math.floor(Date.now() / 1000)
      const result = yield* calls
      if (Math.floor(Date.now() / 1000) === second) return result
      if (attempt === 3) return yield* Effect.dieMessage("the calls did not fit into one second three times")
    }
  })

/** A client address of the documentation range no other test run uses at the same time. */
export const randomClient = (): string =>
  `2001:db8:${randomInt(1, 0xffff).toString(16)}:${randomInt(1, 0xffff).toString(16)}::${randomInt(1, 0xffff).toString(16)}`

export const testRedisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379"

/** Whether a Redis answers at `url` within three seconds (a loaded machine is slow to connect). */
export const redisReachable = async (url: string): Promise<boolean> => {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null
  })
  redis.on("error", () => undefined)
  try {
    await redis.connect()
    return (await redis.ping()) === "PONG"
  } catch {
    return false
  } finally {
    redis.disconnect()
  }
}
