import { Context, Effect, Layer, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { AppConfig } from "../Config.ts"
import { scopedRedis, untilReady } from "../Platform/RedisClient.ts"
import type { Redis } from "ioredis"
import type pg from "pg"
import { DatabasePool, installationName } from "../Sql/Database.ts"
import { type Count, LEASE_TIMES, type LeaseTimes, leasedCounter, MIN_BLOCK, type Turn } from "./LeasedCounter.ts"

export type { Turn } from "./LeasedCounter.ts"

export interface ClickLimitsService {
  /** Takes one of the link's `max` visits, shared exactly by every instance; rejects when the counter cannot answer. */
  readonly take: (linkId: number, max: number) => Promise<Turn>
  /** `take`, answered at once (no promise, no microtask) when this instance's lease holds a slot. */
  readonly visit: (linkId: number, max: number) => "allowed" | Promise<Turn>
  /** Archives the link (its limit was reached or it expired); the change feed tells every instance. */
  readonly archive: (linkId: number) => Promise<void>
}

// Every statement here is unnamed: a named one is a trap on a connection whose session outlives
// the pg client or is shared (the embedded database's sockets share PGlite's one session, as does
// a pooler), where the name is already taken. A statement per thousand visits plans in microseconds.
const ARCHIVE = {
  text: "UPDATE links SET status = 'archived', modified = now() WHERE id = $1 AND status = 'active'"
}

const ENSURE_ROWS = {
  text: "INSERT INTO link_limits (link_id, used) SELECT unnest($1::bigint[]), 0 ON CONFLICT (link_id) DO NOTHING"
}

/**
 * One statement for the visits waiting and the leases due, of any number of links. It first takes
 * back this instance's lease of each link (locked, `mine`) and deletes any other instance's lease
 * past its expiry (`gone`): their slots free again. Then, under the row's lock, it adds the slots
 * this instance answered from its lease to `used` (at most to the limit), gives the visits asked for
 * a turn each while `used + leased` stays within the limit (`granted`), lends this instance `lent`
 * more slots when an eighth of the room left is at least $8 (`MIN_BLOCK`), and writes the lease it
 * now holds, the slots it keeps and those lent, until $9 ms from now: in place (`held`: no indexed
 * column changes, so the update stays on the row's page and leaves no index entry behind), or
 * deleted when it holds none (`dropped`). Each table is joined to the links asked for: a hash join
 * over a small table, lookups through its key over a large one (`= ANY ($1)` in a filter would
 * compare every row with every link). `f` is kept in link order, which a plan of lookups walks, so
 * instances lock rows in one order.
 * The commit does not wait for the write-ahead log to reach the disk
 * (docs/decisions/0021-smart-links-visitor-side.md, "Exact click limits").
 */
const TAKE_MANY = {
  text: `WITH w AS (
           SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])
             AS w (link_id, max, n, consumed, keep, want)
         ), mine AS (
           SELECT x.link_id, x.slots, true AS own FROM link_limit_leases x JOIN w ON x.link_id = w.link_id
           WHERE x.instance = $7::uuid
           FOR UPDATE OF x
         ), gone AS (
           DELETE FROM link_limit_leases x USING w
           WHERE x.link_id = w.link_id AND x.instance <> $7::uuid AND x.expires_at < now()
           RETURNING x.link_id, x.slots, false AS own
         ), freed AS (
           SELECT link_id, sum(slots)::bigint AS slots, bool_or(own) AS own FROM (TABLE mine UNION ALL TABLE gone) back GROUP BY link_id
         ), f AS MATERIALIZED (
           SELECT w.link_id, w.max, w.n, w.consumed, w.want, coalesce(freed.slots, 0)::bigint AS freed,
                  CASE WHEN freed.own THEN w.keep ELSE 0 END AS keep
           FROM w LEFT JOIN freed ON freed.link_id = w.link_id
           ORDER BY w.link_id
         ), counted AS (
           UPDATE link_limits l SET (used, leased, granted, lent) = (
             SELECT u + g, r + b, g, b
             FROM (SELECT least(l.used + f.consumed, f.max) AS u, l.leased - f.freed + f.keep AS r) s,
                  LATERAL (SELECT greatest(0, least(f.n, f.max - u - r)) AS g) t,
                  LATERAL (SELECT CASE WHEN (f.max - u - r - g) / 8 >= $8 THEN least(f.want, (f.max - u - r - g) / 8) ELSE 0 END AS b) v
           )
           FROM f, (SELECT set_config('synchronous_commit', 'off', true)) AS this_commit
           WHERE l.link_id = f.link_id
           RETURNING l.link_id, l.used, l.leased, l.granted, l.lent, f.keep
         ), held AS (
           INSERT INTO link_limit_leases (link_id, instance, slots, expires_at)
           SELECT link_id, $7::uuid, keep + lent, now() + $9 * interval '1 millisecond' FROM counted WHERE keep + lent > 0
           ON CONFLICT (link_id, instance) DO UPDATE SET slots = excluded.slots, expires_at = excluded.expires_at
         ), dropped AS (
           DELETE FROM link_limit_leases x USING counted c
           WHERE x.link_id = c.link_id AND x.instance = $7::uuid AND c.keep + c.lent = 0
         )
         SELECT link_id, used - granted AS before, granted, lent, keep AS kept, leased - keep - lent AS others, used FROM counted`
}

const DEADLOCK = "40P01"

type Row = Record<"link_id" | "before" | "granted" | "lent" | "kept" | "others" | "used", string | number>

/** Counts in the links' `link_limits` rows, leasing as `instance`. */
const databaseCount = (pool: pg.Pool, instance: string, times: LeaseTimes): Count => {
  // Links whose row this instance knows to exist.
  const known = new Set<number>()
  const take = (ids: ReadonlyArray<number>, asked: Parameters<Count>[0]) => {
    const column = (field: "max" | "n" | "consumed" | "keep" | "want") => ids.map((id) => asked.get(id)![field])
    return pool.query<Row>({
      ...TAKE_MANY,
      values: [ids, column("max"), column("n"), column("consumed"), column("keep"), column("want"), instance, MIN_BLOCK, times.leaseMs]
    })
  }
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
    return new Map(
      rows.map((row) => [
        Number(row.link_id),
        {
          before: Number(row.before),
          granted: Number(row.granted),
          lent: Number(row.lent),
          kept: Number(row.kept),
          others: Number(row.others),
          used: Number(row.used)
        }
      ])
    )
  }
}

/** Counts in Redis: one INCRBY per link in one pipeline; a count past the limit is no turn. Lends no leases. */
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
      return [id, { before, granted: Math.max(0, Math.min(n, max - before)), lent: 0, kept: 0, others: 0, used: Number(after) }]
    })
  )
}

const archiveIn = (pool: pg.Pool) => async (linkId: number) => {
  await pool.query({ ...ARCHIVE, values: [linkId] })
}

/**
 * Counters of `max_clicks` links, the visits waiting on an instance counted by one round trip: with
 * REDIS_URL, an INCRBY per link (a Redis that does not answer within 250 ms fails the visits rather
 * than let them be counted twice or not at all); without, the links' `link_limits` rows in
 * PostgreSQL, which lend an instance blocks of a link's visits while the link is far from its limit.
 * Only limited links call either.
 */
export class ClickLimits extends Context.Tag("ClickLimits")<ClickLimits, ClickLimitsService>() {
  /** The PostgreSQL counter, leasing with `times` (tests shorten them); its leases go back when its scope closes. */
  static readonly layerDatabaseWith = (times: LeaseTimes) =>
    Layer.scoped(
      ClickLimits,
      Effect.gen(function* () {
        const { pool } = yield* DatabasePool
        const archive = archiveIn(pool)
        const counter = leasedCounter(databaseCount(pool, randomUUID(), times), true, (id) => void archive(id).catch(() => undefined), times)
        yield* Effect.addFinalizer(() => Effect.promise(counter.stop))
        return { take: counter.take, visit: counter.visit, archive }
      })
    )

  static readonly layerDatabase = ClickLimits.layerDatabaseWith(LEASE_TIMES)

  static readonly layerRedis = (url: Redacted.Redacted<string>) =>
    Layer.scoped(
      ClickLimits,
      Effect.gen(function* () {
        const { pool } = yield* DatabasePool
        const redis = yield* scopedRedis(url)
        // Commands are never queued: the first visits would fail while it connects (at most 1 s).
        yield* untilReady(redis, 1000)
        // Link ids are per database: deployments (and test databases) sharing a Redis keep apart.
        const prefix = `links:visits:${yield* installationName(pool)}:`
        const archive = archiveIn(pool)
        const counter = leasedCounter(redisCount(redis, prefix), false, (id) => void archive(id).catch(() => undefined), LEASE_TIMES)
        return { take: counter.take, visit: counter.visit, archive }
      })
    )

  static readonly layer = Layer.unwrapEffect(
    Effect.map(AppConfig, (config) =>
      Option.match(config.redisUrl, { onNone: () => ClickLimits.layerDatabase, onSome: ClickLimits.layerRedis })
    )
  )
}
