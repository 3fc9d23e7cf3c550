import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { LinkClicks } from "../Repos/ClickRepo.ts"
import { Mailer } from "./Mailer.ts"

const QUIET_SECONDS = 600

interface Claimed {
  readonly link_id: number
  readonly clicks: number
  readonly previous: number | null
  readonly email: string | null
  readonly short_link: string | null
  readonly url: string | null
}

/**
 * `notify_on_click` (CONTRACT §7): clicks are added up per link as batches land, and an e-mail goes
 * to the link's owner at most once per link per 10 minutes with the clicks since the last one.
 * Claiming a link's count and its 10 minutes is one statement with SKIP LOCKED, so instances never
 * both report the same clicks.
 */
export class ClickNotifier extends Effect.Service<ClickNotifier>()("ClickNotifier", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const mailer = yield* Mailer

    /** Adds a written batch's non-bot clicks to the links that ask for e-mails. */
    const record = (clicks: ReadonlyArray<LinkClicks>) =>
      clicks.length === 0
        ? Effect.void
        : sql`
            INSERT INTO click_notifications (link_id, pending)
            SELECT l.id, c.clicks
            FROM json_to_recordset(${JSON.stringify(clicks)}::json) AS c("linkId" bigint, clicks int)
            JOIN links l ON l.id = c."linkId"
            WHERE l.notify_on_click AND l.status <> 'deleted'
            ON CONFLICT (link_id) DO UPDATE SET pending = click_notifications.pending + excluded.pending`.pipe(Effect.asVoid)

    const restore = (row: Claimed) =>
      sql`
        UPDATE click_notifications
        SET pending = pending + ${row.clicks}, last_sent = to_timestamp(${row.previous})
        WHERE link_id = ${row.link_id}`.pipe(Effect.asVoid)

    const send = (row: Claimed) => {
      if (row.email === null || row.short_link === null) return Effect.succeed(false)
      const plural = row.clicks === 1 ? "click" : "clicks"
      return mailer
        .send({
          to: row.email,
          subject: `${row.short_link}: ${row.clicks} new ${plural}`,
          text: `Your short link ${row.short_link} has ${row.clicks} new ${plural}.\n\nIt leads to ${row.url ?? ""}\n`
        })
        .pipe(
          Effect.as(true),
          Effect.catchAll((error) =>
            Effect.logWarning("click e-mail not sent; will retry", error).pipe(
              Effect.zipRight(restore(row)),
              Effect.as(false)
            )
          )
        )
    }

    /** Sends every e-mail that is due; the number sent. */
    const sendDue = Effect.gen(function* () {
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const claimed = yield* sql<Claimed>`
        WITH due AS (
          SELECT link_id, pending, floor(extract(epoch FROM last_sent))::int8 AS previous
          FROM click_notifications
          WHERE pending > 0 AND (last_sent IS NULL OR last_sent <= to_timestamp(${now - QUIET_SECONDS}))
          FOR UPDATE SKIP LOCKED
        ),
        claimed AS (
          UPDATE click_notifications n SET pending = 0, last_sent = to_timestamp(${now})
          FROM due WHERE n.link_id = due.link_id
          RETURNING n.link_id, due.pending AS clicks, due.previous
        )
        SELECT c.link_id, c.clicks, c.previous, u.email, l.url,
               CASE WHEN l.id IS NULL THEN NULL
                    ELSE (CASE WHEN d.has_ssl THEN 'https://' ELSE 'http://' END) || d.domain || '/' || l.alias END AS short_link
        FROM claimed c
        LEFT JOIN links l ON l.id = c.link_id AND l.status <> 'deleted'
        LEFT JOIN users u ON u.id = l.user_id
        LEFT JOIN domains d ON d.id = l.domain_id`
      const sent = yield* Effect.forEach(claimed, send)
      return sent.filter(Boolean).length
    })

    return { record, sendDue } as const
  })
}) {}
