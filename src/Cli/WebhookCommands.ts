import { Effect, Layer } from "effect"
import { AdminError } from "../Accounts/AdminError.ts"
import { TokenSecret } from "../Auth/TokenStore.ts"
import { DomainAccess } from "../Domains/DomainAccess.ts"
import { DomainRepo } from "../Domains/DomainRepo.ts"
import { type CodedFailure, InvalidInput, isCodedFailure } from "../Platform/Failure.ts"
import { ChangeFeed } from "../Sql/ChangeFeed.ts"
import type { Webhook, WebhookDelivery } from "../Webhooks/Webhook.ts"
import { Webhooks } from "../Webhooks/Webhooks.ts"
import { type Command, PAGE_SIZE } from "./Command.ts"
import { CommandDatabaseLive } from "./CommandDatabase.ts"
import type { Outcome } from "./Outcome.ts"
import { table } from "./Table.ts"

type Of<Tag extends Command["_tag"]> = Extract<Command, { readonly _tag: Tag }>

const WebhooksLive = Webhooks.Default.pipe(
  Layer.provide(Layer.mergeAll(DomainAccess.Default, TokenSecret.Default)),
  Layer.provide(Layer.merge(DomainRepo.Default, ChangeFeed.Default)),
  Layer.provideMerge(CommandDatabaseLive)
)

/** A refusal said as the API says it, code first. */
const refused = (failure: CodedFailure | InvalidInput) =>
  new AdminError({
    message:
      failure instanceof InvalidInput
        ? failure.problems.map((problem) => `${problem.code} ${problem.message}`).join("; ")
        : `${failure.code} ${failure.message}`
  })

const withWebhooks = <A, E extends CodedFailure | InvalidInput>(f: (webhooks: Webhooks) => Effect.Effect<A, E, never>) =>
  Effect.provide(Effect.flatMap(Webhooks, f), WebhooksLive).pipe(
    Effect.catchIf(
      (failure): failure is E => failure instanceof InvalidInput || isCodedFailure(failure),
      (failure) => Effect.fail(refused(failure))
    )
  )

const webhookJson = (webhook: Webhook) => ({ ...webhook })
const deliveryRow = (delivery: WebhookDelivery) => {
  const last = delivery.attempts.at(-1)
  return {
    id: delivery.id,
    event: delivery.event,
    state: delivery.state,
    attempts: delivery.attempts.length,
    last_status: last?.status ?? null,
    last_error: last?.error ?? null,
    created: delivery.created
  }
}

/** The admin CLI's webhook commands (README "Admin CLI"): any domain's webhooks, by id. */
export const webhookCommands = {
  WebhookList: ({ domainId }: Of<"WebhookList">) =>
    withWebhooks((webhooks) => webhooks.operator.list(domainId)).pipe(
      Effect.map(
        (found): Outcome => ({
          json: { objects: found.map(webhookJson) },
          text: found.length === 0 ? `domain ${domainId} has no webhooks` : table(found.map(webhookJson), ["id", "url", "events", "active", "created"])
        })
      )
    ),

  WebhookCreate: ({ domainId, events, url }: Of<"WebhookCreate">) =>
    withWebhooks((webhooks) => webhooks.operator.create(domainId, { url, events })).pipe(
      Effect.map(
        ({ secret, webhook }): Outcome => ({
          json: { ...webhookJson(webhook), secret },
          text: `created webhook ${webhook.id} on domain ${domainId} for ${webhook.events.join(", ")}; signing secret, shown once: ${secret}`
        })
      )
    ),

  WebhookDelete: ({ webhookId }: Of<"WebhookDelete">) =>
    withWebhooks((webhooks) => webhooks.operator.remove(webhookId)).pipe(
      Effect.as<Outcome>({ json: { deleted: webhookId }, text: `deleted webhook ${webhookId} with its deliveries` })
    ),

  WebhookRotateSecret: ({ webhookId }: Of<"WebhookRotateSecret">) =>
    withWebhooks((webhooks) => webhooks.operator.rotateSecret(webhookId)).pipe(
      Effect.map(
        ({ secret, webhook }): Outcome => ({
          json: { ...webhookJson(webhook), secret },
          text: `new signing secret of webhook ${webhook.id}, shown once (the previous one also signs for 24 hours): ${secret}`
        })
      )
    ),

  WebhookDeliveries: ({ page, webhookId }: Of<"WebhookDeliveries">) =>
    withWebhooks((webhooks) => webhooks.operator.deliveries(webhookId, { page, perPage: PAGE_SIZE })).pipe(
      Effect.map(({ deliveries, total }): Outcome => {
        const rows = deliveries.map(deliveryRow)
        const lastPage = Math.max(1, Math.ceil(total / PAGE_SIZE))
        const where = total === 0 ? "no deliveries" : `page ${page} of ${lastPage}, ${total} deliveries in all`
        return {
          json: { objects: deliveries.map((delivery) => ({ ...delivery, attempts: delivery.attempts.map((attempt) => ({ ...attempt })) })), meta: { page, per_page: PAGE_SIZE, total, last_page: lastPage } },
          text: rows.length === 0 ? where : `${table(rows, ["id", "event", "state", "attempts", "last_status", "last_error", "created"])}\n(${where})`
        }
      })
    ),

  WebhookReplay: ({ deliveryId }: Of<"WebhookReplay">) =>
    withWebhooks((webhooks) => webhooks.operator.replay(deliveryId)).pipe(
      Effect.map((delivery): Outcome => ({ json: { id: delivery.id, state: delivery.state }, text: `delivery ${delivery.id} will be sent again` }))
    )
}
