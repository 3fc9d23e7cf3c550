import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { WebhookEvent } from "./Webhook.ts"

/** A link event waiting in the outbox. */
export interface LinkEventRow {
  readonly id: number
  readonly link_id: number
  readonly event: WebhookEvent
  readonly occurred_at: number
}

export interface SubscriberRow {
  readonly id: number
  readonly domain_id: number
  readonly events: ReadonlyArray<string>
}

export interface ClickRow {
  readonly id: string
  readonly link_id: number
  readonly at: number
  readonly country: string | null
  readonly device: string
  readonly referrer: string
  readonly qr: boolean
  readonly bot: boolean
}

/** A delivery taken by this instance: what to send, where, and the sealed secrets to sign with. */
export interface DueDelivery {
  readonly id: number
  readonly event: WebhookEvent
  readonly body: string
  readonly url: string
  readonly secret: Uint8Array
  readonly previous_secret: Uint8Array | null
  /** Attempts made before this one. */
  readonly attempts: number
}

export interface NewDelivery {
  readonly webhookId: number
  readonly event: WebhookEvent
  readonly body: string
}

export interface AttemptResult {
  readonly startedMillis: number
  readonly status: number | null
  readonly durationMs: number
  readonly error: string | null
}

/** The dispatcher's statements: the outbox, the click queue, and leases on due deliveries. */
export class DeliveryRepo extends Effect.Service<DeliveryRepo>()("DeliveryRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** What there is to do, in one statement: an idle poll costs no more. */
    const work = (clickIntervalSeconds: number) =>
      Effect.map(
        sql<{ events: boolean; clicks: boolean; due: boolean }>`
          SELECT EXISTS (SELECT 1 FROM webhook_link_events) AS events,
                 EXISTS (SELECT 1 FROM webhooks w WHERE w.active AND w.clicks_batched <= now() - make_interval(secs => ${clickIntervalSeconds})
                           AND EXISTS (SELECT 1 FROM webhook_clicks c WHERE c.webhook_id = w.id)) AS clicks,
                 EXISTS (SELECT 1 FROM webhook_deliveries WHERE state = 'pending' AND next_attempt <= now()) AS due`,
        ([row]) => row ?? { events: false, clicks: false, due: false }
      )

    /** Oldest first, skipping those another instance holds; in the caller's transaction. */
    const takeLinkEvents = (limit: number) =>
      sql<LinkEventRow>`
        SELECT id, link_id, event, floor(extract(epoch FROM occurred_at))::int8 AS occurred_at
        FROM webhook_link_events ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED`

    const dropLinkEvents = (ids: ReadonlyArray<number>) => sql`DELETE FROM webhook_link_events WHERE ${sql.in("id", ids)}`

    const subscribers = (domainIds: ReadonlyArray<number>) =>
      sql<SubscriberRow>`SELECT id, domain_id, events FROM webhooks WHERE active AND ${sql.in("domain_id", domainIds)} ORDER BY id`

    const insertDeliveries = (rows: ReadonlyArray<NewDelivery>, retryForSeconds: number) =>
      rows.length === 0
        ? Effect.void
        : sql`
            INSERT INTO webhook_deliveries (webhook_id, event, body, next_attempt, retry_until)
            SELECT w, e, b, now(), now() + make_interval(secs => ${retryForSeconds})
            FROM unnest(${rows.map((row) => row.webhookId)}::int8[], ${rows.map((row) => row.event)}::text[],
                        ${rows.map((row) => row.body)}::text[]) AS r(w, e, b)`.pipe(Effect.asVoid)

    /** Webhooks with clicks waiting whose last batch is at least `intervalSeconds` old, locked. */
    const clickBatchesDue = (intervalSeconds: number, limit: number) =>
      sql<{ id: number; domain_id: number }>`
        SELECT w.id, w.domain_id FROM webhooks w
        WHERE w.active AND w.clicks_batched <= now() - make_interval(secs => ${intervalSeconds})
          AND EXISTS (SELECT 1 FROM webhook_clicks c WHERE c.webhook_id = w.id)
        ORDER BY w.clicks_batched LIMIT ${limit} FOR UPDATE OF w SKIP LOCKED`

    /** The webhook's oldest waiting clicks, removed from the queue. */
    const takeClicks = (webhookId: number, limit: number) =>
      sql<ClickRow>`
        DELETE FROM webhook_clicks WHERE id IN (SELECT id FROM webhook_clicks WHERE webhook_id = ${webhookId} ORDER BY id LIMIT ${limit})
        RETURNING click_id AS id, link_id, floor(extract(epoch FROM at))::int8 AS at, country, device, referrer, qr, bot`

    const markBatched = (webhookIds: ReadonlyArray<number>) =>
      webhookIds.length === 0 ? Effect.void : sql`UPDATE webhooks SET clicks_batched = now() WHERE ${sql.in("id", webhookIds)}`.pipe(Effect.asVoid)

    /**
     * Up to `limit` due deliveries of active webhooks, leased to this instance for `leaseSeconds`:
     * another takes one only once its lease has run out (this instance died with it).
     */
    const claimDue = (limit: number, leaseSeconds: number) =>
      sql<DueDelivery>`
        UPDATE webhook_deliveries d SET leased_until = now() + make_interval(secs => ${leaseSeconds})
        FROM webhooks w
        WHERE w.id = d.webhook_id AND d.id IN (
          SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
          WHERE d.state = 'pending' AND d.next_attempt <= now() AND (d.leased_until IS NULL OR d.leased_until < now()) AND w.active
          ORDER BY d.next_attempt LIMIT ${limit} FOR UPDATE OF d SKIP LOCKED)
        RETURNING d.id, d.event, d.body, w.url, w.secret,
                  CASE WHEN w.previous_until > now() THEN w.previous_secret END AS previous_secret,
                  (SELECT count(*)::int4 FROM webhook_attempts a WHERE a.delivery_id = d.id) AS attempts`

    /**
     * The attempt logged, and the delivery delivered, due again after `retryInSeconds`, or given up
     * when that would pass its retry window.
     */
    const record = (id: number, attempt: AttemptResult, delivered: boolean, retryInSeconds: number) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const [updated] = yield* sql<{ next_attempt: Date | null }>`
            UPDATE webhook_deliveries SET
              state = CASE WHEN ${delivered} THEN 'delivered'
                           WHEN now() + make_interval(secs => ${retryInSeconds}) > retry_until THEN 'failed' ELSE 'pending' END,
              next_attempt = CASE WHEN NOT ${delivered} AND now() + make_interval(secs => ${retryInSeconds}) <= retry_until
                                  THEN now() + make_interval(secs => ${retryInSeconds}) END,
              leased_until = NULL
            WHERE id = ${id} RETURNING next_attempt`
          if (updated === undefined) return
          yield* sql`
            INSERT INTO webhook_attempts (delivery_id, number, at, status, duration_ms, error, next_attempt)
            SELECT ${id}, coalesce(max(number), 0) + 1, to_timestamp(${attempt.startedMillis / 1000}), ${attempt.status},
                   ${attempt.durationMs}, ${attempt.error}, ${updated.next_attempt}
            FROM webhook_attempts WHERE delivery_id = ${id}`
        })
      )

    /** Settled deliveries older than `days`, with their attempts, out of the log. */
    const prune = (days: number) =>
      sql`DELETE FROM webhook_deliveries WHERE state <> 'pending' AND created < now() - make_interval(days => ${days})`.pipe(Effect.asVoid)

    /** A lease given back unused (this instance stops): the delivery is due again at once, anywhere. */
    const release = (id: number) => sql`UPDATE webhook_deliveries SET leased_until = NULL WHERE id = ${id}`.pipe(Effect.asVoid)

    return { work, takeLinkEvents, dropLinkEvents, subscribers, insertDeliveries, clickBatchesDue, takeClicks, markBatched, claimDue, record, release, prune } as const
  })
}) {}
