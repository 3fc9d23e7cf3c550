import { SqlClient } from "@effect/sql"
import { Clock, Effect, FiberSet, Schedule, Schema } from "effect"
import { AppConfig } from "../Config.ts"
import { Link } from "../Links/Link.ts"
import { LinkRepo } from "../Links/LinkRepo.ts"
import { policyOf, systemResolver } from "../Links/UrlChecker.ts"
import { databaseOutage } from "../Platform/Outage.ts"
import { type DueDelivery, type NewDelivery, DeliveryRepo } from "./DeliveryRepo.ts"
import { send } from "./Sender.ts"
import { signatureHeader, WebhookSecrets } from "./Signature.ts"

/** Deliveries one instance sends at once. */
const CONCURRENCY = 8
/** Link events turned into deliveries per poll. */
const EVENTS_PER_POLL = 200
/** Webhooks given a click batch per poll, and clicks in one link.clicked delivery at most. */
const CLICK_BATCHES_PER_POLL = 20
export const CLICKS_PER_DELIVERY = 1000
/** The longest wait between two attempts of a delivery. */
const MAX_RETRY_SECONDS = 3600
/** How long the delivery log keeps a settled delivery. */
const LOG_DAYS = 30
/** A lease outlives the attempt's timeout by this much, so a live instance never loses one. */
const LEASE_MARGIN_SECONDS = 30

const encodeLink = Schema.encode(Link)

/** Seconds before the next attempt after `failures` failed ones: the first retry after WEBHOOK_RETRY_SECONDS, doubling, at most an hour. */
export const retryDelaySeconds = (firstSeconds: number, failures: number) =>
  Math.min(MAX_RETRY_SECONDS, firstSeconds * 2 ** Math.min(failures - 1, 20))

/**
 * Sends webhook deliveries, in every instance. Each poll turns link events of the outbox into
 * deliveries (one per subscribed webhook), makes the clicks waiting for a webhook into one batch
 * when its interval has passed, and takes due deliveries under a lease, so that each goes out from
 * one instance. All of it off the redirect path: a few small statements per poll.
 */
export class Dispatcher extends Effect.Service<Dispatcher>()("Dispatcher", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* DeliveryRepo
    const links = yield* LinkRepo
    const secrets = yield* WebhookSecrets
    const config = yield* AppConfig
    const policy = policyOf(config.urlCheckAllowPrivate)
    const timeoutMs = config.webhookTimeoutSeconds * 1000

    const fanOutLinkEvents = sql.withTransaction(
      Effect.gen(function* () {
        const events = yield* repo.takeLinkEvents(EVENTS_PER_POLL)
        if (events.length === 0) return
        const found = yield* links.forEvents([...new Set(events.map((event) => event.link_id))])
        const byId = new Map(found.map((link) => [link.id, link]))
        const hooks = found.length === 0 ? [] : yield* repo.subscribers([...new Set(found.map((link) => link.domain_id))])
        const deliveries: Array<NewDelivery> = []
        for (const event of events) {
          const link = byId.get(event.link_id)
          if (link === undefined) continue
          const wanting = hooks.filter((hook) => hook.domain_id === link.domain_id && hook.events.includes(event.event))
          if (wanting.length === 0) continue
          const body = JSON.stringify({ event: event.event, occurred_at: event.occurred_at, domain_id: link.domain_id, link: yield* encodeLink(link) })
          for (const hook of wanting) deliveries.push({ webhookId: hook.id, event: event.event, body })
        }
        yield* repo.insertDeliveries(deliveries, config.webhookRetryForSeconds)
        yield* repo.dropLinkEvents(events.map((event) => event.id))
      })
    )

    const batchClicks = sql.withTransaction(
      Effect.gen(function* () {
        const due = yield* repo.clickBatchesDue(config.webhookClickIntervalSeconds, CLICK_BATCHES_PER_POLL)
        if (due.length === 0) return
        const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const deliveries: Array<NewDelivery> = []
        for (const hook of due) {
          const clicks = yield* repo.takeClicks(hook.id, CLICKS_PER_DELIVERY)
          const body = JSON.stringify({ event: "link.clicked", occurred_at: now, domain_id: hook.domain_id, clicks })
          deliveries.push({ webhookId: hook.id, event: "link.clicked", body })
        }
        yield* repo.insertDeliveries(deliveries, config.webhookRetryForSeconds)
        yield* repo.markBatched(due.map((hook) => hook.id))
      })
    )

    const attempt = (delivery: DueDelivery) =>
      Effect.gen(function* () {
        const startedMillis = yield* Clock.currentTimeMillis
        const signing = [delivery.secret, ...(delivery.previous_secret === null ? [] : [delivery.previous_secret])].map(secrets.open)
        const current = signing[0]
        const outcome =
          current === undefined
            ? { status: null, error: "the secret cannot be read (this instance's data key differs from the one it was sealed with): rotate the webhook's secret" }
            : yield* send(
                delivery.url,
                {
                  "webhook-id": String(delivery.id),
                  "webhook-event": delivery.event,
                  "webhook-signature": signatureHeader(
                    signing.filter((secret) => secret !== undefined),
                    Math.floor(startedMillis / 1000),
                    delivery.body
                  )
                },
                delivery.body,
                { policy, resolve: systemResolver, timeoutMs }
              )
        const durationMs = Math.round((yield* Clock.currentTimeMillis) - startedMillis)
        const failures = delivery.attempts + 1
        yield* repo.record(
          delivery.id,
          { startedMillis, status: outcome.status, durationMs, error: outcome.error },
          outcome.error === null,
          retryDelaySeconds(config.webhookRetrySeconds, failures)
        )
      }).pipe(
        Effect.onInterrupt(() => repo.release(delivery.id).pipe(Effect.ignore)),
        Effect.withSpan("webhook_delivery", {
          attributes: { "webhook.delivery.id": delivery.id, "webhook.event": delivery.event, "webhook.attempt": delivery.attempts + 1 }
        })
      )

    const running = yield* FiberSet.make()
    const poll = Effect.gen(function* () {
      const work = yield* repo.work(config.webhookClickIntervalSeconds)
      if (work.events) yield* fanOutLinkEvents
      if (work.clicks) yield* batchClicks
      const free = CONCURRENCY - (yield* FiberSet.size(running))
      if (free <= 0 || !(work.events || work.clicks || work.due)) return
      const due = yield* repo.claimDue(free, config.webhookTimeoutSeconds + LEASE_MARGIN_SECONDS)
      for (const delivery of due) {
        yield* FiberSet.run(running, attempt(delivery).pipe(Effect.catchAllCause((cause) => Effect.logWarning("webhook delivery not recorded", cause))))
      }
    })

    yield* poll.pipe(
      Effect.tap(() => databaseOutage.succeeded),
      Effect.catchAllCause(databaseOutage.failed),
      Effect.repeat(Schedule.spaced(config.webhookPollMillis)),
      Effect.forkScoped
    )
    const prune = repo.prune(LOG_DAYS)
    yield* prune.pipe(Effect.catchAllCause(databaseOutage.failed), Effect.repeat(Schedule.spaced("1 hour")), Effect.forkScoped)
    return { poll, prune } as const
  }),
  dependencies: [DeliveryRepo.Default, WebhookSecrets.Default]
}) {}
