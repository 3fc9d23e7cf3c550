import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit, Option } from "effect"
import type pg from "pg"
import { copyIn, CopyWriter, POSTGRES_EPOCH_US } from "../Sql/CopyIn.ts"
import { CopyPool } from "../Sql/Database.ts"
import { type BatchRollup, type ClickBatch, type ClickColumns, type LinkTotal, toColumns } from "./ClickBatch.ts"
import { clickRollupRows, HOURLY_KINDS, kindIn, kindIs, OWNER_KINDS, OWNER_MONTH_KINDS } from "./Rollups.ts"

/** A click as stored: enriched, the client IP only as a keyed hash (hex). */
export interface ClickRow {
  readonly id: string
  /** ISO 8601. */
  readonly at: string
  readonly link_id: number
  readonly domain_id: number
  readonly ip_hash: string
  readonly country: string | null
  readonly region: string | null
  readonly city: string | null
  readonly device: string
  readonly referrer: string
  readonly user_agent: string
  readonly qr: boolean
  readonly bot: boolean
  /** The smart-link destination served (`destinations` id); null or absent (spill files of earlier versions) for the link's URL. */
  readonly destination_id?: number | null
}

/** Clicks that were new to the table, per link, bots left out. */
export interface LinkClicks {
  readonly linkId: number
  readonly clicks: number
}

const CLICK_COLUMNS = "id, at, link_id, domain_id, ip_hash, country, region, city, device, referrer, user_agent_id, qr, bot, destination_id"

/** User agents whose dictionary ids this process remembers (all forgotten at once when full). */
const KNOWN_USER_AGENTS = 10_000

/** `click_count` and `last_clicked` of each link in `counted` (link_id, clicks, last); `updated` is the links that exist. */
const LINK_COUNTS = `
  updated AS (
    UPDATE links
    SET click_count = links.click_count + counted.clicks,
        last_clicked = greatest(links.last_clicked, counted.last)
    FROM counted WHERE links.id = counted.link_id
    RETURNING links.id, links.user_id
  )`

/**
 * A CTE `name` adding the rows of `source` to `table`, summed per `key` (the table's primary key, in
 * its order): one upsert per key, written in key order, so concurrent batches cannot deadlock.
 */
const sumInto = (name: string, table: string, key: ReadonlyArray<string>, source: string) => {
  const columns = key.join(", ")
  return `
  ${name} AS (
    INSERT INTO ${table} (${columns}, clicks, scans)
    SELECT ${columns}, sum(clicks), sum(scans) FROM ${source}
    GROUP BY ${columns} ORDER BY ${columns}
    ON CONFLICT (${columns})
    DO UPDATE SET clicks = ${table}.clicks + excluded.clicks, scans = ${table}.scans + excluded.scans
  )`
}

const LINK_KEY = ["link_id", "kind"] as const
const OWNER_KEY = ["domain_id", "kind"] as const
const VALUE_KEY = ["value", "region", "city"] as const

/**
 * The rollup upserts shared by both write paths, from `facts`: non-bot clicks of existing links summed
 * per (link_id, domain_id, user_id, kind, hour, value, region, city) into `clicks` and `scans`, `hour`
 * being the UTC hour's first instant; `dated` gives each its UTC day and month.
 */
const ROLLUP_UPSERTS = [
  sumInto("per_hour", "click_rollups_hour", [...LINK_KEY, "hour", ...VALUE_KEY], `facts WHERE ${kindIn(HOURLY_KINDS, "facts")}`),
  sumInto(
    "per_user_hour",
    "click_rollups_user_hour",
    [...OWNER_KEY, "hour", "user_id", ...VALUE_KEY],
    `facts WHERE ${kindIn(HOURLY_KINDS, "facts")}`
  ),
  `
  dated AS (
    SELECT link_id, domain_id, user_id, kind, day, date_trunc('month', day)::date AS month, value, region, city, clicks, scans
    FROM (SELECT *, (hour AT TIME ZONE 'UTC')::date AS day FROM facts) f
  )`,
  sumInto("per_link", "click_rollups", [...LINK_KEY, "day", ...VALUE_KEY], "dated"),
  sumInto("per_link_month", "click_rollups_link_month", ["link_id", "month"], `dated WHERE ${kindIs("day", "dated")}`),
  sumInto("per_user", "click_rollups_user", [...OWNER_KEY, "day", "user_id", ...VALUE_KEY], `dated WHERE ${kindIn(OWNER_KINDS, "dated")}`),
  sumInto(
    "per_user_month",
    "click_rollups_user_month",
    [...OWNER_KEY, "month", "user_id", ...VALUE_KEY],
    `dated WHERE ${kindIn(OWNER_MONTH_KINDS, "dated")}`
  )
].join(",")

/**
 * The webhooks that want `link.clicked`, joined to clicks `c` of their domain: each click is queued
 * once per webhook (`sql/0021`: the writer queues them, no trigger), in webhook, time and id order.
 */
const CLICK_WEBHOOKS = "JOIN webhooks w ON w.domain_id = c.domain_id AND w.active AND 'link.clicked' = ANY (w.events) ORDER BY w.id, c.at, c.id"
const WEBHOOK_CLICK_COLUMNS = "webhook_id, click_id, link_id, at, country, device, referrer, qr, bot"
const WEBHOOK_CLICK_VALUES = "w.id, c.id, c.link_id, c.at, c.country, c.device, c.referrer, c.qr, c.bot"

/** The rollup rows each inserted click `i` counts in. */
const CLICK_ROLLUP_ROWS = clickRollupRows("i")

/** Clicks queued for webhooks by one statement: its parameters stay around 1 MB. */
const QUEUE_STATEMENT_ROWS = 5000

const ignoreLostConnection = () => undefined

const monthStart = (year: number, month: number) => new Date(Date.UTC(year, month, 1))

const CLICK_FIELDS = 14
/** The fixed part of a click in the binary format: the field count, 14 lengths, and the values other than text. */
const CLICK_FIXED_BYTES = 2 + CLICK_FIELDS * 4 + 16 + 8 + 8 + 8 + 16 + 4 + 1 + 1 + 4

/** The clicks `rows` into `copy`, in the order of CLICK_COLUMNS, user agents by dictionary id. */
const copyClicks = (copy: CopyWriter, rows: Iterable<ClickRow>, userAgentIds: ReadonlyMap<string, number>) => {
  // Clicks come many to a millisecond: each time is parsed once.
  let lastAt = ""
  let lastUs = 0
  for (const row of rows) {
    const userAgentId = userAgentIds.get(row.user_agent)
    if (userAgentId === undefined) return false
    const { country, region, city, device, referrer } = row
    const text = (country?.length ?? 0) + (region?.length ?? 0) + (city?.length ?? 0) + device.length + referrer.length
    copy.room(CLICK_FIXED_BYTES + 3 * text)
    copy.int16(CLICK_FIELDS)
    copy.hexField(row.id.replaceAll("-", ""))
    if (row.at !== lastAt) {
      lastAt = row.at
      lastUs = Date.parse(row.at) * 1000 - POSTGRES_EPOCH_US
    }
    copy.int64Field(lastUs)
    copy.int64Field(row.link_id)
    copy.int64Field(row.domain_id)
    copy.hexField(row.ip_hash)
    copy.textField(country)
    copy.textField(region)
    copy.textField(city)
    copy.textField(device)
    copy.textField(referrer)
    copy.int32Field(userAgentId)
    copy.boolField(row.qr)
    copy.boolField(row.bot)
    const destination = row.destination_id ?? null
    if (destination === null) copy.nullField()
    else copy.int32Field(destination)
  }
  return true
}

export class ClickRepo extends Effect.Service<ClickRepo>()("ClickRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const copyPool = yield* Effect.serviceOption(CopyPool)
    const known = new Set<string>()
    const userAgentIds = new Map<string, number>()

    /**
     * The dictionary ids of `userAgents`, entering those not there yet. Each statement commits on its
     * own, before the clicks' transaction, so an id remembered here is never one rolled back; the
     * inserts go in text order, so that two instances entering the same new agents cannot deadlock.
     */
    const userAgentIdsOf = (userAgents: Iterable<string>) =>
      Effect.gen(function* () {
        const ids = new Map<string, number>()
        const missing: Array<string> = []
        for (const userAgent of userAgents) {
          const id = userAgentIds.get(userAgent)
          if (id === undefined) missing.push(userAgent)
          else ids.set(userAgent, id)
        }
        if (missing.length === 0) return ids
        yield* sql`
          INSERT INTO user_agents (user_agent) SELECT u FROM unnest(${missing}::text[]) u ORDER BY 1
          ON CONFLICT (user_agent) DO NOTHING`
        const found = yield* sql<{ id: number; user_agent: string }>`
          SELECT id, user_agent FROM user_agents WHERE user_agent = ANY(${missing}::text[])`
        if (userAgentIds.size + found.length > KNOWN_USER_AGENTS) userAgentIds.clear()
        for (const row of found) {
          ids.set(row.user_agent, row.id)
          userAgentIds.set(row.user_agent, row.id)
        }
        return ids
      })

    /** The dictionary ids of the user agents of `columns`, in their order. */
    const userAgentIdsIn = (columns: ClickColumns, ids: ReadonlyMap<string, number>) =>
      Effect.gen(function* () {
        const userAgentId = new Array<number>(columns.user_agent.length)
        for (const [n, userAgent] of columns.user_agent.entries()) {
          const id = ids.get(userAgent)
          if (id === undefined) return yield* Effect.dieMessage("a user agent missing from the dictionary")
          userAgentId[n] = id
        }
        return userAgentId
      })

    /** The FROM item `r` (CLICK_COLUMNS) of clicks in `columns`, their user agents by dictionary id. */
    const clickRows = (columns: ClickColumns, ids: ReadonlyMap<string, number>) =>
      Effect.map(
        userAgentIdsIn(columns, ids),
        (userAgentId) => sql`unnest(
          ${columns.id}::uuid[], ${columns.at}::timestamptz[], ${columns.link_id}::int8[], ${columns.domain_id}::int8[],
          ${columns.ip_hash}::bytea[], ${columns.country}::text[], ${columns.region}::text[], ${columns.city}::text[],
          ${columns.device}::text[], ${columns.referrer}::text[], ${userAgentId}::int4[], ${columns.qr}::bool[], ${columns.bot}::bool[],
          ${columns.destination_id}::int4[]
        ) AS r(${sql.literal(CLICK_COLUMNS)})`
      )

    /**
     * The monthly partition holding `at`. Partition bounds cannot be parameters: the statement is
     * built from two integers only. Two instances may race to create it; the loser sees it exist.
     */
    const ensurePartition = (at: Date) => {
      const year = at.getUTCFullYear()
      const month = at.getUTCMonth()
      const name = `clicks_y${year}m${String(month + 1).padStart(2, "0")}`
      if (known.has(name)) return Effect.void
      const from = monthStart(year, month).toISOString()
      const to = monthStart(year, month + 1).toISOString()
      return sql
        .unsafe(`CREATE TABLE IF NOT EXISTS ${name} PARTITION OF clicks FOR VALUES FROM ('${from}') TO ('${to}')`)
        .pipe(
          Effect.catchAll((error) =>
            Effect.flatMap(
              sql<{ found: boolean }>`SELECT to_regclass(${name}) IS NOT NULL AS found`,
              ([row]) => (row?.found === true ? Effect.void : Effect.fail(error))
            )
          ),
          Effect.tap(() => Effect.sync(() => known.add(name)))
        )
    }

    const ensurePartitions = (rows: ReadonlyArray<ClickRow>) => {
      const months = new Map<string, Date>()
      for (const row of rows) months.set(row.at.slice(0, 7), new Date(row.at))
      return Effect.forEach(months.values(), ensurePartition, { discard: true })
    }

    /**
     * Inserts the batch and, for the clicks new to the table that are not bots, adds them to their
     * link's `click_count`, `last_clicked` and visitors, and to the rollups (hourly, daily and monthly per link; hourly,
     * daily and monthly per domain and link owner), and queues every new click (bots too) for its domain's webhooks that
     * want `link.clicked`, all in one statement: rows already present (a retried batch) are skipped, counted nowhere and
     * queued for no webhook again.
     */
    const insert = (rows: ReadonlyArray<ClickRow>) =>
      Effect.gen(function* () {
        if (rows.length === 0) return []
        yield* ensurePartitions(rows)
        const input = yield* clickRows(toColumns(rows), yield* userAgentIdsOf(new Set(rows.map((row) => row.user_agent))))
        return yield* sql<{ link_id: number; clicks: number }>`
          WITH inserted AS (
            INSERT INTO clicks (${sql.literal(CLICK_COLUMNS)})
            SELECT * FROM ${input}
            ON CONFLICT (link_id, at, id) DO NOTHING
            RETURNING id, link_id, domain_id, at, ip_hash, country, region, city, device, referrer, qr, bot
          ),
          queued AS (
            INSERT INTO webhook_clicks (${sql.literal(WEBHOOK_CLICK_COLUMNS)})
            SELECT ${sql.literal(WEBHOOK_CLICK_VALUES)} FROM inserted c ${sql.literal(CLICK_WEBHOOKS)}
          ),
          counted AS (
            SELECT link_id, count(*) AS clicks, max(at) AS last FROM inserted WHERE NOT bot GROUP BY link_id
          ),
          ${sql.literal(LINK_COUNTS)},
          facts AS (
            SELECT i.link_id, i.domain_id, u.user_id, date_trunc('hour', i.at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour, k.kind, k.value, k.region,
                   k.city, count(*) AS clicks, count(*) FILTER (WHERE i.qr) AS scans
            FROM inserted i
            JOIN updated u ON u.id = i.link_id
            CROSS JOIN LATERAL (VALUES ${sql.literal(CLICK_ROLLUP_ROWS)}) AS k(kind, value, region, city)
            WHERE NOT i.bot
            GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
          ),
          ${sql.literal(ROLLUP_UPSERTS)},
          visitors AS (
            INSERT INTO link_visitors (link_id, ip_hash)
            SELECT DISTINCT i.link_id, i.ip_hash FROM inserted i JOIN updated u ON u.id = i.link_id
            WHERE NOT i.bot ORDER BY i.link_id, i.ip_hash
            ON CONFLICT DO NOTHING
          )
          SELECT link_id, clicks::int4 AS clicks FROM counted WHERE link_id IN (SELECT id FROM updated)`.pipe(
          Effect.map((result): ReadonlyArray<LinkClicks> => result.map((row) => ({ linkId: row.link_id, clicks: row.clicks })))
        )
      })

    /** Row locks on the links in id order: another instance's batch touching the same links then waits instead of deadlocking. */
    const lockLinks = (links: ReadonlyArray<LinkTotal>) =>
      sql`SELECT 1 FROM links WHERE ${sql.in("id", links.map((link) => link.link_id))} ORDER BY id FOR NO KEY UPDATE`

    /** The batch's sums added to the links, rollups and visitors; the links that exist. */
    const addSums = ({ links, rollups, visitors }: BatchRollup) =>
      sql<{ link_id: number }>`
        WITH counted AS (
          SELECT * FROM json_to_recordset(${JSON.stringify(links)}::json) AS r(link_id bigint, clicks int, last timestamptz)
        ),
        ${sql.literal(LINK_COUNTS)},
        facts AS (
          SELECT r.*, u.user_id
          FROM json_to_recordset(${JSON.stringify(rollups)}::json) AS r(
            link_id bigint, domain_id bigint, kind "char", hour timestamptz, value text, region text, city text, clicks int, scans int)
          JOIN updated u ON u.id = r.link_id
        ),
        ${sql.literal(ROLLUP_UPSERTS)},
        visitors AS (
          INSERT INTO link_visitors (link_id, ip_hash)
          SELECT v.link_id, decode(v.ip_hash, 'hex')
          FROM json_to_recordset(${JSON.stringify(visitors)}::json) AS v(link_id bigint, ip_hash text)
          WHERE v.link_id IN (SELECT id FROM updated) ORDER BY 1, 2
          ON CONFLICT DO NOTHING
        )
        SELECT id AS link_id FROM updated`

    /** The batch's links that exist, with their clicks. */
    const countedLinks = (links: ReadonlyArray<LinkTotal>, updated: ReadonlyArray<{ readonly link_id: number }>) => {
      const present = new Set(updated.map((row) => row.link_id))
      return links.flatMap((link): ReadonlyArray<LinkClicks> => (present.has(link.link_id) ? [{ linkId: link.link_id, clicks: link.clicks }] : []))
    }

    /** Of `domainIds`, those with an active webhook that wants `link.clicked`. */
    const clickWebhookDomains = (domainIds: ReadonlyArray<number>) =>
      sql<{ domain_id: number }>`
        SELECT DISTINCT domain_id FROM webhooks WHERE active AND 'link.clicked' = ANY (events) AND ${sql.in("domain_id", domainIds)}`

    /**
     * The statements queuing the fresh clicks `rows` of `domains` (`clickWebhookDomains`) for their
     * webhooks, in time and id order, 5,000 clicks a statement. None without such a domain: then
     * storing a batch reads one row at most for webhooks.
     */
    const queueClicks = (rows: ReadonlyArray<ClickRow>, domains: ReadonlyArray<{ readonly domain_id: number }>) => {
      if (domains.length === 0) return []
      const wanted = new Set(domains.map((row) => row.domain_id))
      const queued = rows
        .filter((row) => wanted.has(row.domain_id))
        .sort((a, b) => (a.at === b.at ? (a.id < b.id ? -1 : 1) : a.at < b.at ? -1 : 1))
      const statements = []
      for (let start = 0; start < queued.length; start += QUEUE_STATEMENT_ROWS) {
        const part = queued.slice(start, start + QUEUE_STATEMENT_ROWS)
        const column = <A>(pick: (row: ClickRow) => A) => part.map(pick)
        statements.push(sql`
          INSERT INTO webhook_clicks (${sql.literal(WEBHOOK_CLICK_COLUMNS)})
          SELECT ${sql.literal(WEBHOOK_CLICK_VALUES)}
          FROM unnest(${column((row) => row.id)}::uuid[], ${column((row) => row.at)}::timestamptz[], ${column((row) => row.link_id)}::int8[],
                      ${column((row) => row.domain_id)}::int8[], ${column((row) => row.country)}::text[], ${column((row) => row.device)}::text[],
                      ${column((row) => row.referrer)}::text[], ${column((row) => row.qr)}::bool[], ${column((row) => row.bot)}::bool[])
            AS c(id, at, link_id, domain_id, country, device, referrer, qr, bot)
          ${sql.literal(CLICK_WEBHOOKS)}`)
      }
      return statements
    }

    /**
     * `insertFresh` on a PostgreSQL server: the clicks in one `COPY ... FROM STDIN`, which inserts them
     * a page at a time (one WAL record per page, not per row) and parses no parameter, in link order
     * (`ClickBatch.inLinkOrder`), then the webhooks' queue and the sums, in one transaction on a
     * connection of the pool. A batch that fails or is interrupted closes its connection, and its
     * transaction with it.
     */
    const copyFresh = (pool: pg.Pool, batch: ClickBatch, ids: ReadonlyMap<string, number>, sums: BatchRollup) =>
      Effect.gen(function* () {
        const copy = new CopyWriter()
        if (!copyClicks(copy, batch.inLinkOrder(), ids)) return yield* Effect.dieMessage("a user agent missing from the dictionary")
        const chunks = copy.end()
        const lock = sums.links.length === 0 ? undefined : lockLinks(sums.links).compile()
        const add = sums.links.length === 0 ? undefined : addSums(sums).compile()
        const [webhooksText, webhooksParams] = clickWebhookDomains(batch.domainIds()).compile()
        const failed = (cause: unknown) => new SqlError({ cause, message: "clicks not written" })
        return yield* Effect.acquireUseRelease(
          Effect.tryPromise({ try: () => pool.connect(), catch: failed }).pipe(
            // A connection lost while the client is checked out fails the query in flight, and pg
            // also emits it as an "error" event, which the pool stops listening to at checkout:
            // unheard, it would end the thread.
            Effect.tap((client) => Effect.sync(() => client.on("error", ignoreLostConnection)))
          ),
          (client) =>
            Effect.tryPromise({
              try: async () => {
                await client.query("BEGIN")
                await copyIn(client, `COPY clicks (${CLICK_COLUMNS}) FROM STDIN (FORMAT binary)`, chunks)
                const domains = await client.query<{ domain_id: number }>(webhooksText, [...webhooksParams])
                for (const statement of queueClicks(batch.rows, domains.rows)) {
                  const [text, params] = statement.compile()
                  await client.query(text, [...params])
                }
                let updated: ReadonlyArray<{ link_id: number }> = []
                if (lock !== undefined && add !== undefined) {
                  await client.query(lock[0], [...lock[1]])
                  updated = (await client.query<{ link_id: number }>(add[0], [...add[1]])).rows
                }
                await client.query("COMMIT")
                return countedLinks(sums.links, updated)
              },
              catch: failed
            }),
          (client, exit) =>
            Effect.sync(() => {
              client.removeListener("error", ignoreLostConnection)
              client.release(Exit.isSuccess(exit) ? undefined : true)
            })
        )
      })

    /**
     * The same effect as `insert` for clicks that were never written (their ids were just made), at
     * a fraction of the database's work: the clicks go in with plain inserts (COPY on a server) and the
     * batch is summed here first (`ClickBatch`), so the rollups, counts and visitors take one upsert per
     * link and value instead of one per click. All in one transaction: if any part fails, nothing is
     * written, and a retry must go through `insert`, which skips the clicks already present (a commit
     * whose answer was lost).
     */
    const insertFresh = (batch: ClickBatch) =>
      Effect.gen(function* () {
        if (batch.size === 0) return []
        yield* ensurePartitions(batch.rows)
        const ids = yield* userAgentIdsOf(batch.userAgents)
        const sums = batch.summary()
        if (Option.isSome(copyPool)) return yield* copyFresh(copyPool.value, batch, ids, sums)
        const statements = yield* Effect.forEach(batch.columns(), (columns) => clickRows(columns, ids))
        return yield* sql.withTransaction(
          Effect.gen(function* () {
            for (const input of statements) {
              yield* sql`INSERT INTO clicks (${sql.literal(CLICK_COLUMNS)}) SELECT * FROM ${input}`
            }
            for (const statement of queueClicks(batch.rows, yield* clickWebhookDomains(batch.domainIds()))) yield* statement
            if (sums.links.length === 0) return []
            yield* lockLinks(sums.links)
            return countedLinks(sums.links, yield* addSums(sums))
          })
        )
      })

    /** Adds a written batch's non-bot clicks per link to its pending click e-mail count; links without notify_on_click are left out. */
    const recordNotifications = (
      clicks: ReadonlyArray<{ readonly linkId: number; readonly clicks: number }>
    ): Effect.Effect<void, SqlError> =>
      clicks.length === 0
        ? Effect.void
        : sql`
            INSERT INTO click_notifications (link_id, pending)
            SELECT l.id, c.clicks
            FROM (SELECT "linkId" AS link_id, sum(clicks)::int AS clicks
                  FROM json_to_recordset(${JSON.stringify(clicks)}::json) AS r("linkId" bigint, clicks int)
                  GROUP BY "linkId") c
            JOIN links l ON l.id = c.link_id
            WHERE l.notify_on_click AND l.status <> 'deleted' AND c.clicks > 0
            ORDER BY l.id
            ON CONFLICT (link_id) DO UPDATE SET pending = click_notifications.pending + excluded.pending`.pipe(Effect.asVoid)

    return { insert, insertFresh, ensurePartition, recordNotifications } as const
  })
}) {}
