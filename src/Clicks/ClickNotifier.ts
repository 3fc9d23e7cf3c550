import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Exit } from "effect"
import { Mailer } from "../Platform/Mailer.ts"

/** The least time between two e-mails about one link: at most one per link per 10 minutes. */
export const QUIET_SECONDS = 600

const SEND_CONCURRENCY = 8

/** A link's clicks taken by one `sendDue`. No address when the link is deleted or no longer asks for e-mails. */
interface Claim {
  readonly link_id: number
  readonly clicks: number
  /** When the previous e-mail went (Unix seconds), put back if this one is not sent. */
  readonly previous: number | null
  readonly email: string | null
  readonly short_link: string | null
  readonly url: string | null
}

const plural = (n: number) => (n === 1 ? "1 new click" : `${n} new clicks`)

/**
 * `notify_on_click`: the click writer adds each written batch's non-bot clicks to the pending count
 * of the links that ask for e-mails (`ClickRepo.recordNotifications`), and `sendDue` sends the owner one e-mail per link at most every
 * 10 minutes with the clicks since the last one. Taking a count and its 10 minutes is one statement
 * with SKIP LOCKED, so instances sharing the database never report the same clicks; a count whose
 * e-mail fails goes back to pending for the next call.
 */
export class ClickNotifier extends Effect.Service<ClickNotifier>()("ClickNotifier", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const mailer = yield* Mailer

    // Claimed rows of deleted links, or of links no longer asking for e-mails, come back without an address.
    const claim = (now: number) =>
      sql<Claim>`
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
               CASE WHEN d.has_ssl THEN 'https://' ELSE 'http://' END || d.domain || '/' || l.alias AS short_link
        FROM claimed c
        LEFT JOIN links l ON l.id = c.link_id AND l.notify_on_click AND l.status <> 'deleted'
        LEFT JOIN users u ON u.id = l.user_id
        LEFT JOIN domains d ON d.id = l.domain_id`

    // last_sent goes back only if it is still this claim's: the retry need not wait 10 minutes.
    const putBack = (row: Claim, now: number) =>
      sql`
        UPDATE click_notifications
        SET pending = pending + ${row.clicks},
            last_sent = CASE WHEN last_sent = to_timestamp(${now}) THEN to_timestamp(${row.previous}) ELSE last_sent END
        WHERE link_id = ${row.link_id}`.pipe(
        Effect.catchAll((error) =>
          Effect.logError("click e-mail count lost: cannot put it back", error).pipe(
            Effect.annotateLogs({ link_id: row.link_id, clicks: row.clicks })
          )
        )
      )

    /**
     * Only the SMTP exchange may be interrupted; a count not sent always goes back. Each e-mail is a
     * `click_email` span, the parent of its `smtp send` and of the count's put back: the notifier's
     * loop serves no request, so it is the root of a trace of its own.
     */
    const deliver = (row: Claim, now: number, started: Set<Claim>) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          started.add(row)
          const { email, short_link } = row
          if (email === null || short_link === null) return false
          return yield* Effect.gen(function* () {
            const exit = yield* Effect.exit(
              restore(
                mailer.send({
                  to: email,
                  subject: `${short_link}: ${plural(row.clicks)}`,
                  text:
                    `Your short link ${short_link} has ${plural(row.clicks)} since the last report.\n` +
                    `It leads to ${row.url ?? ""}\n\n` +
                    `You get at most one such e-mail per link every 10 minutes while notify_on_click is on.\n`
                })
              )
            )
            if (Exit.isSuccess(exit)) return true
            // The Mailer warns once when the SMTP server goes down and says when it is back.
            yield* Effect.logDebug("click e-mail not sent; its clicks stay pending for the next attempt", exit.cause).pipe(
              Effect.annotateLogs({ link_id: row.link_id, clicks: row.clicks })
            )
            yield* putBack(row, now)
            return false
          }).pipe(Effect.withSpan("click_email", { attributes: { "click_email.link_id": row.link_id, "click_email.clicks": row.clicks } }))
        })
      )

    /** Sends every e-mail that is due; the number sent. */
    const sendDue: Effect.Effect<number, SqlError> = Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const claimed = yield* claim(now)
        const started = new Set<Claim>()
        const sent = yield* restore(
          Effect.forEach(claimed, (row) => deliver(row, now, started), { concurrency: SEND_CONCURRENCY })
        ).pipe(
          Effect.onInterrupt(() =>
            Effect.forEach(
              claimed.filter((row) => !started.has(row)),
              (row) => putBack(row, now),
              { discard: true }
            )
          )
        )
        return sent.filter(Boolean).length
      })
    )

    return { sendDue } as const
  })
}) {}
