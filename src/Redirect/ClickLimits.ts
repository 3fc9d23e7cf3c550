import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../Config.ts"
import { recordClickLimitRoundTrip } from "../Platform/Metrics.ts"
import { scopedRedis } from "../Platform/RedisClient.ts"
import type { Redis } from "ioredis"
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

/** The turn of a visit given one: the `used`-th of the link's `max`. */
const turnOf = (used: number, max: number): Turn => (used === max ? "last" : "allowed")

const ARCHIVE = {
  name: "archive_limited_link",
  text: "UPDATE links SET status = 'archived', modified = now() WHERE id = $1 AND status = 'active'"
}

const ENSURE_ROWS = {
  name: "ensure_link_limits",
  text: "INSERT INTO link_limits (link_id, used) SELECT unnest($1::bigint[]), 0 ON CONFLICT (link_id) DO NOTHING"
}

/**
 * One statement for the visits waiting, of any number of links: each row, as it is under its lock,
 * moves up by the visits asked for, at most to the limit, and keeps how many of them got a turn
 * (`granted`). The plan walks $1 (sorted) and looks each row up, so instances lock rows in one order.
 * The commit does not wait for the write-ahead log to reach the disk (docs/DECISIONS.md, exact click
 * limits).
 */
const TAKE_MANY = {
  name: "take_link_visits_granted",
  text: `UPDATE link_limits l SET used = least(l.used + w.n, w.max), granted = least(w.n, w.max - l.used)
         FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS w (link_id, n, max),
              (SELECT set_config('synchronous_commit', 'off', true)) AS this_commit
         WHERE l.link_id = w.link_id AND l.used < w.max
         RETURNING l.link_id, l.used - l.granted AS before, l.granted`
}

/** A link's visits one round trip counts. */
interface Asked {
  readonly n: number
  readonly max: number
}

/** What they got: `before` visits were counted ahead of them, and the first `granted` of them have a turn. */
interface Counted {
  readonly before: number
  readonly granted: number
}

/** One round trip counting the visits of every link asked for; a link left out got no turn. */
type Count = (asked: ReadonlyMap<number, Asked>) => Promise<ReadonlyMap<number, Counted>>

interface Waiting {
  readonly max: number
  readonly visits: Array<{ readonly resolve: (turn: Turn) => void; readonly reject: (error: unknown) => void }>
}

/** A round trip that carried at least this many visits means the instance is busy: the next one waits a little. */
const BUSY = 8
/** The longest the next round trip then waits for more visits to join it (the p99 of a redirect is some ms). */
const GAP_MS = 2
/** A group this large is sent without waiting longer. */
const FULL = 200

/**
 * Visits counted by `count`, one round trip at a time per process: the visits that arrive while one
 * is under way wait for the next, which counts them together. A lone visit goes at once (after the
 * visits of the same turn of the event loop). When the round trip that just returned carried `BUSY`
 * visits or more and visits are waiting, the next one waits while they keep coming (checked every
 * millisecond, the timers' step), at most `GAP_MS` or until `FULL` wait, so that a busy instance
 * sends fewer, larger groups (docs/DECISIONS.md, exact click limits).
 */
const grouped = (count: Count) => {
  let waiting = new Map<number, Waiting>()
  let waitingVisits = 0
  let running = false
  // Visits waiting when the round trip under way was answered (-1 until then).
  let waitingAtAnswer = -1

  const send = async (batch: Map<number, Waiting>, visits: number) => {
    const asked = new Map([...batch].map(([id, { max, visits }]) => [id, { n: visits.length, max }]))
    const counted = await count(asked)
    waitingAtAnswer = waitingVisits
    recordClickLimitRoundTrip(visits)
    for (const [id, { max, visits }] of batch) {
      const got = counted.get(id)
      visits.forEach((visit, i) => visit.resolve(got === undefined || i >= got.granted ? "exhausted" : turnOf(got.before + i + 1, max)))
    }
  }

  const flush = () => {
    if (waiting.size === 0) {
      running = false
      return
    }
    running = true
    const batch = waiting
    const visits = waitingVisits
    waiting = new Map()
    waitingVisits = 0
    waitingAtAnswer = -1
    send(batch, visits)
      .catch((error: unknown) => {
        for (const { visits } of batch.values()) for (const visit of visits) visit.reject(error)
      })
      .finally(() => {
        // None waiting at the answer, and every visit answered asked again at once: callers that each
        // wait for their answer (a fixed number of them), whom a wait would only slow.
        const allBack = waitingAtAnswer === 0 && waitingVisits === visits
        if (visits >= BUSY && waitingVisits > 0 && !allBack) gather(performance.now(), waitingVisits)
        else flush()
      })
  }

  /** Waits, still `running`, while visits keep joining the next group, then sends it. */
  const gather = (since: number, seen: number) =>
    setTimeout(() => {
      const quiet = waitingVisits === seen
      if (quiet || waitingVisits >= FULL || performance.now() - since >= GAP_MS) flush()
      else gather(since, waitingVisits)
    }, 1)

  return (linkId: number, max: number) =>
    new Promise<Turn>((resolve, reject) => {
      let entry = waiting.get(linkId)
      if (entry === undefined) {
        entry = { max, visits: [] }
        waiting.set(linkId, entry)
      }
      entry.visits.push({ resolve, reject })
      waitingVisits += 1
      if (!running) {
        running = true
        setImmediate(flush)
      }
    })
}

const DEADLOCK = "40P01"

/** Counts in the links' `link_limits` rows. */
const databaseCount = (pool: pg.Pool): Count => {
  // Links whose row this instance knows to exist.
  const known = new Set<number>()
  const take = (ids: ReadonlyArray<number>, asked: ReadonlyMap<number, Asked>) =>
    pool.query<{ link_id: string | number; before: string | number; granted: string | number }>({
      ...TAKE_MANY,
      values: [ids, ids.map((id) => asked.get(id)!.n), ids.map((id) => asked.get(id)!.max)]
    })
  return async (asked) => {
    const ids = [...asked.keys()].sort((a, b) => a - b)
    const fresh = ids.filter((id) => !known.has(id))
    if (fresh.length > 0) await pool.query({ ...ENSURE_ROWS, values: [fresh] })
    if (known.size > 100_000) known.clear()
    for (const id of fresh) known.add(id)
    // Should a plan take the rows out of order and deadlock with another instance, the statement
    // PostgreSQL chose to fail changed nothing: it is sent again.
    const { rows } = await take(ids, asked).catch((error: unknown) =>
      error instanceof Error && "code" in error && error.code === DEADLOCK ? take(ids, asked) : Promise.reject(error)
    )
    return new Map(rows.map((row) => [Number(row.link_id), { before: Number(row.before), granted: Number(row.granted) }]))
  }
}

/** Counts in Redis: one INCRBY per link in one pipeline; a count past the limit is no turn. */
const redisCount = (redis: Redis, prefix: string): Count => async (asked) => {
  const ids = [...asked.keys()]
  const pipeline = redis.pipeline()
  for (const id of ids) pipeline.incrby(`${prefix}${id}`, asked.get(id)!.n)
  const replies = (await pipeline.exec()) ?? []
  return new Map(
    ids.map((id, i) => {
      const [error, after] = replies[i] ?? [new Error("Redis did not answer"), undefined]
      if (error !== null) throw error
      const { n, max } = asked.get(id)!
      const before = Number(after) - n
      return [id, { before, granted: Math.max(0, Math.min(n, max - before)) }]
    })
  )
}

/**
 * Counters of `max_clicks` links, the visits waiting on an instance counted by one round trip: with
 * REDIS_URL, an INCRBY per link (a Redis that does not answer within 250 ms fails the visits rather
 * than let them be counted twice or not at all); without, the links' `link_limits` rows in
 * PostgreSQL. Only limited links call either.
 */
export class ClickLimits extends Context.Tag("ClickLimits")<ClickLimits, ClickLimitsService>() {
  static readonly layerDatabase = Layer.effect(
    ClickLimits,
    Effect.map(DatabasePool, ({ pool }) => ({
      take: grouped(databaseCount(pool)),
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
          take: grouped(redisCount(redis, prefix)),
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
