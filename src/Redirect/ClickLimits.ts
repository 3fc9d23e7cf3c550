import { Context, Effect, Layer, Option, Redacted } from "effect"
import { Redis } from "ioredis"
import { AppConfig } from "../Config.ts"
import { DatabasePool } from "../Sql/Database.ts"

/** Whether this visitor is one of the link's `max_clicks`: `last` when it is the final one. */
export type Turn = "allowed" | "last" | "exhausted"

export interface ClickLimitsService {
  /** Takes one of the link's `max` visits, shared exactly by every instance; rejects when the counter cannot answer. */
  readonly take: (linkId: number, max: number) => Promise<Turn>
  /** Archives the link (its limit was reached or it expired); the change feed tells every instance. */
  readonly archive: (linkId: number) => Promise<void>
}

const turnOf = (used: number | undefined, max: number): Turn =>
  used === undefined || used > max ? "exhausted" : used === max ? "last" : "allowed"

const ARCHIVE = {
  name: "archive_limited_link",
  text: "UPDATE links SET status = 'archived', modified = now() WHERE id = $1 AND status = 'active'"
}

/** One statement: the row is locked while it is counted, so concurrent takes on any instance queue on it. */
const TAKE = {
  name: "take_link_visit",
  text: `INSERT INTO link_limits (link_id, used) VALUES ($1, 1)
         ON CONFLICT (link_id) DO UPDATE SET used = link_limits.used + 1 WHERE link_limits.used < $2
         RETURNING used`
}

/**
 * Counters of `max_clicks` links. With REDIS_URL, an INCR per visit (one round trip; a Redis that does
 * not answer within 250 ms fails the visit rather than let it be counted twice or not at all); without,
 * one UPDATE of the link's `link_limits` row in PostgreSQL. Only limited links call either.
 */
export class ClickLimits extends Context.Tag("ClickLimits")<ClickLimits, ClickLimitsService>() {
  static readonly layerDatabase = Layer.effect(
    ClickLimits,
    Effect.map(DatabasePool, ({ pool }) => ({
      take: async (linkId, max) => {
        const { rows } = await pool.query<{ used: string | number }>({ ...TAKE, values: [linkId, max] })
        return turnOf(rows[0] === undefined ? undefined : Number(rows[0].used), max)
      },
      archive: async (linkId) => {
        await pool.query({ ...ARCHIVE, values: [linkId] })
      }
    }))
  )

  static readonly layerRedis = (url: Redacted.Redacted<string>) =>
    Layer.scoped(
      ClickLimits,
      Effect.gen(function* () {
        const { pool } = yield* DatabasePool
        const redis = yield* Effect.acquireRelease(
          Effect.sync(
            () =>
              new Redis(Redacted.value(url), {
                enableOfflineQueue: false,
                maxRetriesPerRequest: 0,
                connectTimeout: 1000,
                commandTimeout: 250,
                retryStrategy: (attempts: number) => Math.min(500 * 2 ** Math.min(attempts - 1, 6), 30_000)
              })
          ),
          (redis) =>
            Effect.promise(async () => {
              if (redis.status === "ready") await redis.quit().catch(() => undefined)
            }).pipe(Effect.ensuring(Effect.sync(() => redis.disconnect())))
        )
        redis.on("error", () => undefined)
        // Link ids are per database: deployments (and test databases) sharing a Redis keep apart.
        const database = yield* Effect.promise(() => pool.query<{ name: string }>("SELECT current_database() AS name"))
        const prefix = `links:visits:${database.rows[0]!.name}:`
        return {
          take: async (linkId, max) => turnOf(await redis.incr(`${prefix}${linkId}`), max),
          archive: async (linkId) => {
            await pool.query({ ...ARCHIVE, values: [linkId] })
          }
        }
      })
    )

  static readonly layer = Layer.unwrapEffect(
    Effect.map(AppConfig, (config) =>
      Option.match(config.redisUrl, { onNone: () => ClickLimits.layerDatabase, onSome: ClickLimits.layerRedis })
    )
  )
}
