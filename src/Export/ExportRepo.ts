import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { TimeRange } from "../Analytics/AnalyticsWindow.ts"
import type { ClickRow } from "../Clicks/ClickRepo.ts"

/** A link as the links export writes it; times are `YYYY-MM-DD HH:MM:SS` in UTC, or null when unset. */
export interface LinkExportRow {
  readonly id: number
  readonly alias: string
  readonly short_link: string
  readonly url: string
  readonly redirect_url: string
  readonly notes: string
  /** The link's tag names, by name ignoring case, one a line (a name holds no control character). */
  readonly tags: string
  readonly status: string
  readonly redirect_type: number
  readonly user_id: number
  readonly created: string
  readonly modified: string
  readonly archive_on: string | null
  readonly delete_on: string | null
  readonly click_count: number
  readonly last_clicked: string | null
}

/** A click as the clicks export writes it: R1's fields, its link and time; never the client address. */
export interface ClickExportRow
  extends Pick<ClickRow, "link_id" | "country" | "region" | "city" | "device" | "referrer" | "user_agent" | "qr" | "bot"> {
  readonly engagement_id: string
  /** The click's exact time as text, the key of the next chunk. */
  readonly at_key: string
  readonly clicked_at: string
  readonly unix: number
  readonly alias: string | null
}

/** Where a chunk of clicks starts: after this click (time, then id). */
export interface ClickKey {
  readonly at: string
  readonly id: string
}

/** The clicks of a domain's export: a window and, optionally, one link. */
export interface ClickScope extends TimeRange {
  readonly domainId: number
  readonly linkId: number | undefined
}

const DAY = 86_400

/** The first slice of time a domain's export chunk reads, in seconds. */
const FIRST_SLICE = 300

/** How much wider each next slice may be than the last. */
const MAX_GROWTH = 256

/**
 * The read side of the exports: chunks in keyset order (links by id, clicks by time then id), each
 * one short statement, so that an export holds no connection, cursor or transaction between chunks.
 */
export class ExportRepo extends Effect.Service<ExportRepo>()("ExportRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const utc = (column: string) => sql.unsafe(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`)

    /** The domain's links that are not deleted, after link `after`, by id (`links_domain_id` of sql/0018). */
    const links = (domainId: number, after: Option.Option<number>, limit: number) =>
      sql<LinkExportRow>`
        SELECT l.id, l.alias, CASE WHEN d.has_ssl THEN 'https://' ELSE 'http://' END || d.domain || '/' || l.alias AS short_link,
               l.url, l.redirect_url, l.notes,
               coalesce((SELECT string_agg(t.name, E'\\n' ORDER BY lower(t.name))
                         FROM link_tags lt JOIN tags t ON t.id = lt.tag_id WHERE lt.link_id = l.id), '') AS tags,
               l.status, l.redirect_type, l.user_id, ${utc("l.created")} AS created, ${utc("l.modified")} AS modified,
               ${utc("l.archive_on")} AS archive_on, ${utc("l.delete_on")} AS delete_on, l.click_count,
               ${utc("l.last_clicked")} AS last_clicked
        FROM links l JOIN domains d ON d.id = l.domain_id
        WHERE l.domain_id = ${domainId} AND l.status <> 'deleted' AND l.id > ${Option.getOrElse(after, () => 0)}
        ORDER BY l.id
        LIMIT ${limit}`

    const clickColumns = sql`c.id::text AS engagement_id, c.at::text AS at_key, ${utc("c.at")} AS clicked_at,
               floor(extract(epoch FROM c.at))::int8 AS unix, c.link_id, l.alias, c.country, c.region, c.city,
               c.device, c.referrer, coalesce(u.user_agent, '') AS user_agent, c.qr, c.bot`

    /** Clicks `c` after the key: `c.at >= after` lets the index range scan start at it (the row comparison alone would only filter). */
    const afterKey = (after: Option.Option<ClickKey>) =>
      Option.match(after, {
        onNone: () => sql``,
        onSome: (key) => sql`AND c.at >= ${key.at}::timestamptz AND (c.at, c.id) > (${key.at}::timestamptz, ${key.id}::uuid)`
      })

    /** One link's clicks of the window after `after`, by time then id: in the order of the key (link_id, at, id). */
    const linkClicks = (scope: ClickScope, linkId: number, after: Option.Option<ClickKey>, limit: number) =>
      sql<ClickExportRow>`
        SELECT ${clickColumns}
        FROM clicks c
        LEFT JOIN links l ON l.id = c.link_id
        LEFT JOIN user_agents u ON u.id = c.user_agent_id
        WHERE c.link_id = ${linkId} AND c.domain_id = ${scope.domainId}
          AND c.at >= to_timestamp(${scope.from}) AND c.at < to_timestamp(${scope.to}) ${afterKey(after)}
        ORDER BY c.at, c.id
        LIMIT ${limit}`

    /**
     * The domain's clicks in `[from, to)` (Unix seconds, inside UTC day `day`) after `after`, by time
     * then id: those of each link clicked that day (domain_click_days, sql/0024) read in key order,
     * `limit` at most per link, merged.
     */
    const sliceClicks = (domainId: number, day: number, from: number, to: number, after: Option.Option<ClickKey>, limit: number) =>
      sql<ClickExportRow>`
        SELECT ${clickColumns}
        FROM domain_click_days s
        CROSS JOIN LATERAL (
          SELECT c.* FROM clicks c
          WHERE c.link_id = s.link_id AND c.domain_id = ${domainId}
            AND c.at >= to_timestamp(${from}) AND c.at < to_timestamp(${to}) ${afterKey(after)}
          ORDER BY c.at, c.id
          LIMIT ${limit}
        ) c
        LEFT JOIN links l ON l.id = c.link_id
        LEFT JOIN user_agents u ON u.id = c.user_agent_id
        WHERE s.domain_id = ${domainId} AND s.day = DATE '1970-01-01' + ${day}::int4
        ORDER BY c.at, c.id
        LIMIT ${limit}`

    /** The first UTC day (a day number) from `from` to `last` on which the domain had a click, if any. */
    const nextDay = (domainId: number, from: number, last: number) =>
      Effect.map(
        sql<{ day: number | null }>`
          SELECT (min(day) - DATE '1970-01-01')::int4 AS day FROM domain_click_days
          WHERE domain_id = ${domainId} AND day >= DATE '1970-01-01' + ${from}::int4 AND day <= DATE '1970-01-01' + ${last}::int4`,
        ([row]) => (row?.day === null || row?.day === undefined ? Option.none<number>() : Option.some(row.day))
      )

    /** Where a chunk starts reading, in Unix seconds: the window's start, or just before the key's time. */
    const startOf = (scope: ClickScope, after: Option.Option<ClickKey>) =>
      Option.match(after, {
        onNone: () => Effect.succeed(scope.from),
        onSome: (key) =>
          Effect.map(
            sql<{ at: number }>`SELECT extract(epoch FROM ${key.at}::timestamptz)::float8 AS at`,
            // The bound only narrows the slices; the key itself decides, so a bound a little early is safe.
            ([row]) => Math.max(scope.from, Math.floor((row?.at ?? scope.from) * 1000) / 1000 - 0.001)
          )
      })

    /**
     * A domain's clicks after `after`, by time then id, without an index on the domain: the days with
     * its clicks, each read by slices of time from the key on (FIRST_SLICE long, then as wide as the clicks a
     * second of the last predict for what the chunk still needs), so that a chunk reads about its own clicks, not
     * the rest of the window.
     */
    const domainClicks = (scope: ClickScope, after: Option.Option<ClickKey>, limit: number) =>
      Effect.gen(function* () {
        const rows: Array<ClickExportRow> = []
        let key = after
        let from = yield* startOf(scope, after)
        let width = FIRST_SLICE
        const lastDay = Math.ceil(scope.to / DAY) - 1
        while (rows.length < limit && from < scope.to) {
          const day = yield* nextDay(scope.domainId, Math.floor(from / DAY), lastDay)
          if (Option.isNone(day)) break
          if (day.value * DAY > from) {
            from = day.value * DAY
            key = Option.none()
          }
          const to = Math.min(scope.to, (day.value + 1) * DAY, from + width)
          const needed = limit - rows.length
          const slice = yield* sliceClicks(scope.domainId, day.value, from, to, key, needed)
          rows.push(...slice)
          const last = slice.at(-1)
          if (last !== undefined) key = Option.some({ at: last.at_key, id: last.engagement_id })
          // The next slice sized by the clicks a second this one held, bounded: a burst inside it cannot make the next read huge.
          width = slice.length === 0 ? width * 8 : width * Math.min(MAX_GROWTH, Math.max(1.25, (1.25 * needed) / slice.length))
          from = to
        }
        return rows
      })

    /** The scope's clicks after `after`, by time then id. */
    const clicks = (scope: ClickScope, after: Option.Option<ClickKey>, limit: number) =>
      scope.linkId === undefined ? domainClicks(scope, after, limit) : linkClicks(scope, scope.linkId, after, limit)

    /** Whether the domain exists, deleted or not (the operator's exports). */
    const domainExists = (domainId: number) =>
      Effect.map(sql<{ id: number }>`SELECT id FROM domains WHERE id = ${domainId}`, (rows) => rows.length > 0)

    /** Whether the link is one of the domain's that is not deleted. */
    const linkOfDomain = (domainId: number, linkId: number) =>
      Effect.map(
        sql<{ id: number }>`SELECT id FROM links WHERE id = ${linkId} AND domain_id = ${domainId} AND status <> 'deleted'`,
        (rows) => rows.length > 0
      )

    return { links, clicks, domainExists, linkOfDomain } as const
  })
}) {}
