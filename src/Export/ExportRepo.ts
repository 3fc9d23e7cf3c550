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

    /**
     * The scope's clicks after `after`, by time then id. `c.at >= after` lets the index range scan
     * start at the key (the row comparison alone would only filter); ties in time are sorted by id.
     */
    const clicks = (scope: ClickScope, after: Option.Option<ClickKey>, limit: number) =>
      sql<ClickExportRow>`
        SELECT c.id::text AS engagement_id, c.at::text AS at_key, ${utc("c.at")} AS clicked_at,
               floor(extract(epoch FROM c.at))::int8 AS unix, c.link_id, l.alias, c.country, c.region, c.city,
               c.device, c.referrer, coalesce(u.user_agent, '') AS user_agent, c.qr, c.bot
        FROM clicks c
        LEFT JOIN links l ON l.id = c.link_id
        LEFT JOIN user_agents u ON u.id = c.user_agent_id
        WHERE c.domain_id = ${scope.domainId}
          ${scope.linkId === undefined ? sql`` : sql`AND c.link_id = ${scope.linkId}`}
          AND c.at >= to_timestamp(${scope.from}) AND c.at < to_timestamp(${scope.to})
          ${Option.match(after, {
            onNone: () => sql``,
            onSome: (key) => sql`AND c.at >= ${key.at}::timestamptz AND (c.at, c.id) > (${key.at}::timestamptz, ${key.id}::uuid)`
          })}
        ORDER BY c.at, c.id
        LIMIT ${limit}`

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
