import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../Config.ts"
import { scopedRedis } from "../Platform/RedisClient.ts"
import type pg from "pg"
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

const ENSURE_ROWS = {
  name: "ensure_link_limits",
  text: "INSERT INTO link_limits (link_id, used) SELECT unnest($1::bigint[]), 0 ON CONFLICT (link_id) DO NOTHING"
}

/**
 * One statement for every visit waiting, of any number of links: each row is locked (in link order,
 * so instances cannot deadlock) and read as it is now, then moved up by the visits asked for, at
 * most to the limit. `before` and `after` tell which visits got a turn.
 */
const TAKE_MANY = {
  name: "take_link_visits",
  text: `WITH want AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS w (link_id, n, max)),
         locked AS (
           SELECT l.link_id, l.used FROM link_limits l JOIN want w ON w.link_id = l.link_id
           WHERE l.used < w.max ORDER BY l.link_id FOR UPDATE OF l)
         UPDATE link_limits l SET used = least(locked.used + w.n, w.max)
         FROM locked JOIN want w ON w.link_id = locked.link_id
         WHERE l.link_id = locked.link_id
         RETURNING l.link_id, locked.used AS before, l.used AS after`
}

interface Waiting {
  readonly max: number
  readonly visits: Array<{ readonly resolve: (turn: Turn) => void; readonly reject: (error: unknown) => void }>
}

/**
 * Takes in PostgreSQL: the visits that arrive while a statement is under way wait for the next one,
 * so a busy instance sends one statement at a time whatever the rate.
 */
const databaseCounter = (pool: pg.Pool) => {
  let waiting = new Map<number, Waiting>()
  let running = false
  // Links whose row this instance knows to exist.
  const known = new Set<number>()

  const send = async (batch: Map<number, Waiting>) => {
    const ids = [...batch.keys()]
    const fresh = ids.filter((id) => !known.has(id))
    if (fresh.length > 0) await pool.query({ ...ENSURE_ROWS, values: [fresh] })
    if (known.size > 100_000) known.clear()
    for (const id of fresh) known.add(id)
    const { rows } = await pool.query<{ link_id: string | number; before: string | number; after: string | number }>({
      ...TAKE_MANY,
      values: [ids, ids.map((id) => batch.get(id)!.visits.length), ids.map((id) => batch.get(id)!.max)]
    })
    const granted = new Map(rows.map((row) => [Number(row.link_id), { before: Number(row.before), after: Number(row.after) }]))
    for (const [id, { max, visits }] of batch) {
      const range = granted.get(id)
      visits.forEach((visit, i) => {
        const used = range === undefined || range.before + i + 1 > range.after ? undefined : range.before + i + 1
        visit.resolve(turnOf(used, max))
      })
    }
  }

  const flush = () => {
    if (running || waiting.size === 0) return
    running = true
    const batch = waiting
    waiting = new Map()
    send(batch)
      .catch((error: unknown) => {
        for (const { visits } of batch.values()) for (const visit of visits) visit.reject(error)
      })
      .finally(() => {
        running = false
        flush()
      })
  }

  return (linkId: number, max: number) =>
    new Promise<Turn>((resolve, reject) => {
      let entry = waiting.get(linkId)
      if (entry === undefined) {
        entry = { max, visits: [] }
        waiting.set(linkId, entry)
      }
      entry.visits.push({ resolve, reject })
      if (!running) setImmediate(flush)
    })
}

/**
 * Counters of `max_clicks` links. With REDIS_URL, an INCR per visit (one round trip; a Redis that does
 * not answer within 250 ms fails the visit rather than let it be counted twice or not at all); without,
 * the link's `link_limits` row in PostgreSQL, the visits waiting on an instance taken by one
 * statement. Only limited links call either.
 */
export class ClickLimits extends Context.Tag("ClickLimits")<ClickLimits, ClickLimitsService>() {
  static readonly layerDatabase = Layer.effect(
    ClickLimits,
    Effect.map(DatabasePool, ({ pool }) => ({
      take: databaseCounter(pool),
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
        const redis = yield* scopedRedis(url)
        // Commands are never queued: the first visits would fail while it connects (at most 1 s).
        yield* Effect.async<void>((resume) => {
          const ready = () => {
            clearTimeout(timer)
            redis.off("ready", ready)
            resume(Effect.void)
          }
          const timer = setTimeout(ready, 1000)
          redis.once("ready", ready)
          return Effect.sync(() => {
            clearTimeout(timer)
            redis.off("ready", ready)
          })
        })
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
