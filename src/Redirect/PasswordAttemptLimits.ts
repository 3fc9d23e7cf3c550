import { Clock, Context, Effect, Either, Layer, Option, Redacted } from "effect"
import type { Redis } from "ioredis"
import { randomBytes } from "node:crypto"
import { AppConfig } from "../Config.ts"
import { makeOutage } from "../Platform/Outage.ts"
import { scopedRedis, untilReady } from "../Platform/RedisClient.ts"
import { DatabasePool, installationName } from "../Sql/Database.ts"
import { ATTEMPT_LIMITS, type Attempt, type AttemptLimits, attemptsInProcess, LOCAL_TICKET, waitSeconds } from "./PasswordAttempts.ts"

export interface PasswordAttemptLimitsService {
  /** Counts a password try on `linkId` from `network` (`clientNetwork`), or refuses it before anything is hashed. */
  readonly attempt: (linkId: number, network: string) => Effect.Effect<Attempt>
  /** The try `ticket` was the right answer: it leaves the link's window, and `network` is proven for the link. */
  readonly proven: (linkId: number, network: string, ticket: string) => Effect.Effect<void>
}

/**
 * Atomically: drops tries older than the window from the network's and the link's sorted sets,
 * refuses when the network's is full ({1, oldest}), or, unless the network proved the link lately,
 * when the link's is ({2, oldest}); else adds the try to both ({0, 0}).
 * KEYS: network window, link window, proven networks of the link.
 * ARGV: now, window ms, per network, per link, ticket, network, proven ms.
 */
const ATTEMPT_SCRIPT = `
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local function count(key)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  return redis.call('ZCARD', key)
end
local function oldest(key)
  return tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
end
if count(KEYS[1]) >= tonumber(ARGV[3]) then return {1, oldest(KEYS[1])} end
local proven = tonumber(redis.call('ZSCORE', KEYS[3], ARGV[6]))
if not (proven and now - proven < tonumber(ARGV[7])) then
  if count(KEYS[2]) >= tonumber(ARGV[4]) then return {2, oldest(KEYS[2])} end
  redis.call('ZADD', KEYS[2], now, ARGV[5])
  redis.call('PEXPIRE', KEYS[2], window)
end
redis.call('ZADD', KEYS[1], now, ARGV[5])
redis.call('PEXPIRE', KEYS[1], window)
return {0, 0}`

/** Proven networks kept per link: the latest ones. */
const MAX_PROVEN = 10_000

const redisAnswer = (reply: unknown): readonly [number, number] | undefined =>
  Array.isArray(reply) && typeof reply[0] === "number" && typeof reply[1] === "number" ? [reply[0], reply[1]] : undefined

/** The tries counted in Redis under `prefix`, shared by every instance using it; in process while Redis does not answer. */
const inRedis = (redis: Redis, prefix: string, limits: AttemptLimits): PasswordAttemptLimitsService => {
  const local = attemptsInProcess(limits)
  const outage = makeOutage("redis", "Redis (password tries counted in process meanwhile)")
  const keys = (linkId: number, network: string) => [`${prefix}net:${network}`, `${prefix}link:${linkId}`, `${prefix}proven:${linkId}`] as const
  const call = <A>(what: string, send: () => Promise<A | undefined>) =>
    Effect.tryPromise(send).pipe(
      Effect.filterOrFail(
        (answer): answer is A => answer !== undefined,
        () => new Error("unexpected reply")
      ),
      Effect.timeoutFail({ duration: 250, onTimeout: () => new Error("no answer within 250 ms") }),
      Effect.withSpan(`redis ${what}`, { kind: "client", attributes: { "db.system.name": "redis", "db.operation.name": what } }),
      Effect.tapBoth({ onFailure: outage.failed, onSuccess: () => outage.succeeded }),
      Effect.either
    )
  return {
    attempt: (linkId, network) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const ticket = `${now}-${randomBytes(6).toString("base64url")}`
        const [networkKey, linkKey, provenKey] = keys(linkId, network)
        const args = [now, limits.windowMs, limits.perNetwork, limits.perLink, ticket, network, limits.provenMs]
        const answer = yield* call("EVAL", () => redis.eval(ATTEMPT_SCRIPT, 3, networkKey, linkKey, provenKey, ...args).then(redisAnswer))
        if (Either.isLeft(answer)) return local.attempt(linkId, network, now)
        const [refusedBy, oldest] = answer.right
        if (refusedBy === 0) return { _tag: "Allowed", ticket } as const
        return { _tag: "Refused", by: refusedBy === 1 ? "network" : "link", waitSeconds: waitSeconds(oldest, limits.windowMs, now) } as const
      }),
    proven: (linkId, network, ticket) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (ticket.startsWith(LOCAL_TICKET)) return local.proven(linkId, network, ticket, now)
        const [, linkKey, provenKey] = keys(linkId, network)
        const done = yield* call("MULTI", () =>
          redis
            .multi()
            .zrem(linkKey, ticket)
            .zadd(provenKey, now, network)
            .zremrangebyscore(provenKey, "-inf", now - limits.provenMs)
            .zremrangebyrank(provenKey, 0, -MAX_PROVEN - 1)
            .pexpire(provenKey, limits.provenMs)
            .exec()
            .then((replies) => (replies?.every(([error]) => error === null) ? true : undefined))
        )
        if (Either.isLeft(done)) local.proven(linkId, network, ticket, now)
      })
  }
}

/** Password tries of links (`PasswordAttempts.ts`): in Redis with REDIS_URL, shared by every instance; else in process. */
export class PasswordAttemptLimits extends Context.Tag("PasswordAttemptLimits")<PasswordAttemptLimits, PasswordAttemptLimitsService>() {
  static readonly layerMemory = (limits: AttemptLimits = ATTEMPT_LIMITS) =>
    Layer.sync(PasswordAttemptLimits, (): PasswordAttemptLimitsService => {
      const local = attemptsInProcess(limits)
      return {
        attempt: (linkId, network) => Effect.map(Clock.currentTimeMillis, (now) => local.attempt(linkId, network, now)),
        proven: (linkId, network, ticket) => Effect.map(Clock.currentTimeMillis, (now) => local.proven(linkId, network, ticket, now))
      }
    })

  static readonly layerRedis = (url: Redacted.Redacted<string>, limits: AttemptLimits = ATTEMPT_LIMITS) =>
    Layer.scoped(
      PasswordAttemptLimits,
      Effect.gen(function* () {
        const { pool } = yield* DatabasePool
        const redis = yield* scopedRedis(url)
        yield* untilReady(redis, 1000)
        // Link ids are per database: the installation's name keeps deployments sharing a Redis apart.
        return inRedis(redis, `links:pw:${yield* installationName(pool)}:`, limits)
      })
    )

  static readonly layer = Layer.unwrapEffect(
    Effect.map(AppConfig, (config) =>
      Option.match(config.redisUrl, { onNone: () => PasswordAttemptLimits.layerMemory(), onSome: (url) => PasswordAttemptLimits.layerRedis(url) })
    )
  )
}
