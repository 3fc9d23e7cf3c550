import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { unlessNull } from "../Platform/Unset.ts"
import { Webhook, WebhookDelivery, type WebhookEvent } from "./Webhook.ts"

class WebhookRow extends Schema.Class<WebhookRow>("WebhookRow")({
  ...Webhook.fields,
  previous_secret_until: Schema.NullOr(Schema.Int)
}) {
  toWebhook(): Webhook {
    const { previous_secret_until, ...rest } = this
    return new Webhook({ ...rest, ...unlessNull({ previous_secret_until }) })
  }
}

/** Attempts come as JSON with their nulls stripped (`json_strip_nulls`): absent is unset. */
class DeliveryRow extends Schema.Class<DeliveryRow>("DeliveryRow")({
  ...WebhookDelivery.fields,
  next_attempt: Schema.NullOr(Schema.Int),
  total: Schema.Int
}) {
  toDelivery(): WebhookDelivery {
    const { total: _, next_attempt, ...delivery } = this
    return new WebhookDelivery({ ...delivery, ...unlessNull({ next_attempt }) })
  }
}

export interface NewWebhook {
  readonly domainId: number
  readonly url: string
  readonly events: ReadonlyArray<WebhookEvent>
  readonly active: boolean
  readonly secret: Uint8Array
}

export interface WebhookChanges {
  readonly url?: string | undefined
  readonly events?: ReadonlyArray<WebhookEvent> | undefined
  readonly active?: boolean | undefined
}

/** The webhooks of domains, and their delivery log, as the API manages them. */
export class WebhookRepo extends Effect.Service<WebhookRepo>()("WebhookRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const epoch = (column: string) => sql.unsafe(`floor(extract(epoch FROM ${column}))::int8`)
    const columns = sql`
      w.id, w.domain_id, w.url, w.events, w.active, ${epoch("w.created")} AS created, ${epoch("w.modified")} AS modified,
      CASE WHEN w.previous_until > now() THEN ${epoch("w.previous_until")} END AS previous_secret_until`

    const findOne = SqlSchema.findOne({
      Request: Schema.Struct({ domainId: Schema.Int, id: Schema.Int }),
      Result: WebhookRow,
      execute: ({ domainId, id }) => sql`SELECT ${columns} FROM webhooks w WHERE w.id = ${id} AND w.domain_id = ${domainId}`
    })

    const byId = (domainId: number, id: number) => Effect.map(findOne({ domainId, id }), Option.map((row) => row.toWebhook()))

    const list = (domainId: number) =>
      Effect.map(
        SqlSchema.findAll({
          Request: Schema.Int,
          Result: WebhookRow,
          execute: (domainId) => sql`SELECT ${columns} FROM webhooks w WHERE w.domain_id = ${domainId} ORDER BY w.id`
        })(domainId),
        (rows) => rows.map((row) => row.toWebhook())
      )

    /**
     * How many webhooks the domain has, active and in all; none when it is not a live domain. Locks
     * the domain's row, so that two concurrent creates cannot pass the limits together.
     */
    const countOnDomain = (domainId: number) =>
      Effect.gen(function* () {
        const live = yield* sql`SELECT id FROM domains WHERE id = ${domainId} AND status <> 'deleted' FOR UPDATE`
        if (live.length === 0) return Option.none<{ active: number; total: number }>()
        const [row] = yield* sql<{ active: number; total: number }>`
          SELECT count(*) FILTER (WHERE active)::int8 AS active, count(*)::int8 AS total FROM webhooks WHERE domain_id = ${domainId}`
        return Option.some(row ?? { active: 0, total: 0 })
      })

    /** The domain of a webhook, or of a delivery's webhook (the admin CLI names them by id alone). */
    const domainOf = (webhookId: number) =>
      Effect.map(sql<{ domain_id: number }>`SELECT domain_id FROM webhooks WHERE id = ${webhookId}`, ([row]) => Option.fromNullable(row?.domain_id))

    const webhookOfDelivery = (deliveryId: number) =>
      Effect.map(
        sql<{ webhook_id: number; domain_id: number }>`
          SELECT d.webhook_id, w.domain_id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ${deliveryId}`,
        ([row]) => Option.fromNullable(row)
      )

    const insert = (input: NewWebhook) =>
      Effect.flatMap(
        sql<{ id: number }>`
          INSERT INTO webhooks (domain_id, url, events, active, secret)
          VALUES (${input.domainId}, ${input.url}, ${[...input.events]}::text[], ${input.active}, ${input.secret})
          RETURNING id`,
        ([row]) => (row === undefined ? Effect.dieMessage("webhook not inserted") : Effect.succeed(row.id))
      )

    /** Whether the webhook was there to change. */
    const update = (domainId: number, id: number, changes: WebhookChanges) => {
      const sets = [sql`modified = now()`]
      if (changes.url !== undefined) sets.push(sql`url = ${changes.url}`)
      if (changes.events !== undefined) sets.push(sql`events = ${[...changes.events]}::text[]`)
      if (changes.active !== undefined) sets.push(sql`active = ${changes.active}`)
      return Effect.map(
        sql<{ id: number }>`UPDATE webhooks SET ${sql.csv(sets)} WHERE id = ${id} AND domain_id = ${domainId} RETURNING id`,
        (rows) => rows.length > 0
      )
    }

    /** The new secret signs from now on; the one it replaces, beside it, for `graceSeconds`. */
    const rotate = (domainId: number, id: number, secret: Uint8Array, graceSeconds: number) =>
      Effect.map(
        sql<{ id: number }>`
          UPDATE webhooks
          SET previous_secret = secret, previous_until = now() + make_interval(secs => ${graceSeconds}), secret = ${secret}, modified = now()
          WHERE id = ${id} AND domain_id = ${domainId} RETURNING id`,
        (rows) => rows.length > 0
      )

    /** With its deliveries and their log. */
    const remove = (domainId: number, id: number) =>
      Effect.map(sql<{ id: number }>`DELETE FROM webhooks WHERE id = ${id} AND domain_id = ${domainId} RETURNING id`, (rows) => rows.length > 0)

    const deliveryColumns = sql`
      d.id, d.webhook_id, d.event, ${epoch("d.created")} AS created, d.state, ${epoch("d.next_attempt")} AS next_attempt,
      coalesce((SELECT json_agg(json_strip_nulls(json_build_object(
                  'number', a.number, 'at', ${epoch("a.at")}, 'status', a.status, 'duration_ms', a.duration_ms,
                  'error', a.error, 'next_attempt', ${epoch("a.next_attempt")})) ORDER BY a.number)
                FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]') AS attempts`

    /** A page of the webhook's deliveries, newest first, and how many there are. */
    const deliveries = (webhookId: number, limit: number, offset: number) =>
      Effect.gen(function* () {
        const rows = yield* SqlSchema.findAll({
          Request: Schema.Void,
          Result: DeliveryRow,
          execute: () => sql`
            SELECT ${deliveryColumns}, count(*) OVER ()::int8 AS total
            FROM webhook_deliveries d WHERE d.webhook_id = ${webhookId}
            ORDER BY d.id DESC LIMIT ${limit} OFFSET ${offset}`
        })(undefined)
        const total =
          rows[0]?.total ??
          (yield* sql<{ n: number }>`SELECT count(*)::int8 AS n FROM webhook_deliveries WHERE webhook_id = ${webhookId}`)[0]?.n ??
          0
        return { deliveries: rows.map((row) => row.toDelivery()), total }
      })

    const delivery = (webhookId: number, id: number) =>
      Effect.map(
        SqlSchema.findOne({
          Request: Schema.Void,
          Result: DeliveryRow,
          execute: () => sql`SELECT ${deliveryColumns}, 1::int8 AS total FROM webhook_deliveries d WHERE d.id = ${id} AND d.webhook_id = ${webhookId}`
        })(undefined),
        Option.map((row) => row.toDelivery())
      )

    /**
     * The delivery due again now, with a new retry window; one being sent at this moment is left to
     * its attempt. False when it is not the webhook's.
     */
    const replay = (webhookId: number, id: number, retryForSeconds: number) =>
      Effect.map(
        sql<{ id: number }>`
          UPDATE webhook_deliveries
          SET state = CASE WHEN leased_until > now() THEN state ELSE 'pending' END,
              next_attempt = CASE WHEN leased_until > now() THEN next_attempt ELSE now() END,
              retry_until = now() + make_interval(secs => ${retryForSeconds})
          WHERE id = ${id} AND webhook_id = ${webhookId} RETURNING id`,
        (rows) => rows.length > 0
      )

    return { byId, list, countOnDomain, domainOf, webhookOfDelivery, insert, update, rotate, remove, deliveries, delivery, replay } as const
  })
}) {}
