import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

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
}

/** Clicks that were new to the table, per link, bots left out. */
export interface LinkClicks {
  readonly linkId: number
  readonly clicks: number
}

const monthStart = (year: number, month: number) => new Date(Date.UTC(year, month, 1))

export class ClickRepo extends Effect.Service<ClickRepo>()("ClickRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const known = new Set<string>()

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

    /**
     * Inserts the batch and adds each link's new, non-bot clicks to its `click_count`, in one
     * statement: rows already present (a retried batch) are skipped and counted nowhere.
     */
    const insert = (rows: ReadonlyArray<ClickRow>) =>
      Effect.gen(function* () {
        if (rows.length === 0) return []
        const months = new Map<string, Date>()
        for (const row of rows) months.set(row.at.slice(0, 7), new Date(row.at))
        yield* Effect.forEach(months.values(), ensurePartition, { discard: true })
        return yield* sql<{ link_id: number; clicks: number }>`
          WITH input AS (
            SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(
              id uuid, at timestamptz, link_id bigint, domain_id bigint, ip_hash text, country text, region text,
              city text, device text, referrer text, user_agent text, qr boolean, bot boolean)
          ),
          inserted AS (
            INSERT INTO clicks (id, at, link_id, domain_id, ip_hash, country, region, city, device, referrer, user_agent, qr, bot)
            SELECT id, at, link_id, domain_id, decode(ip_hash, 'hex'), country, region, city, device, referrer, user_agent, qr, bot
            FROM input
            ON CONFLICT (id, at) DO NOTHING
            RETURNING link_id, bot
          ),
          counted AS (SELECT link_id, count(*) AS clicks FROM inserted WHERE NOT bot GROUP BY link_id),
          updated AS (
            UPDATE links SET click_count = links.click_count + counted.clicks
            FROM counted WHERE links.id = counted.link_id
            RETURNING links.id
          )
          SELECT link_id, clicks::int4 AS clicks FROM counted WHERE link_id IN (SELECT id FROM updated)`.pipe(
          Effect.map((result): ReadonlyArray<LinkClicks> => result.map((row) => ({ linkId: row.link_id, clicks: row.clicks })))
        )
      })

    return { insert, ensurePartition } as const
  })
}) {}
