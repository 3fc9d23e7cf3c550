import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth/Authentication.ts"
import { DomainNotFound } from "../Domains/DomainErrors.ts"
import { BodyTimeout, BodyTooLarge } from "../Platform/ApiError.ts"
import { coded, documentedInteger, PathId, required } from "../Platform/Coded.ts"
import { answers, answersInvalidInput } from "../Platform/Failure.ts"
import { Meta } from "../Platform/Pagination.ts"
import { Webhook, WebhookDelivery, WebhookEvent } from "./Webhook.ts"
import { DeliveryNotFound, NothingToUpdate, NotWebhookAdmin, TooManyWebhooks, WebhookNotFound } from "./WebhookErrors.ts"

const domainId = HttpApiSchema.param("domain_id", PathId(10101))
const webhookId = HttpApiSchema.param("webhook_id", PathId(10801))
const deliveryId = HttpApiSchema.param("delivery_id", PathId(10806))

const Url = coded(10802)(Schema.String)
const Events = coded(10804)(Schema.NonEmptyArray(WebhookEvent))
const Active = coded(10805)(Schema.Boolean)

export const CreateWebhook = Schema.Struct({
  url: required(Url, 10802),
  events: required(Events, 10804),
  active: Schema.optional(Active)
}).annotations({ parseOptions: { errors: "all" } })

export const UpdateWebhook = Schema.Struct({
  url: Schema.optional(Url),
  events: Schema.optional(Events),
  active: Schema.optional(Active)
}).annotations({ parseOptions: { errors: "all" } })

export class WebhookList extends Schema.Class<WebhookList>("WebhookList")({ objects: Schema.Array(Webhook) }) {}

/** A webhook with its signing secret: only the answers of create and rotate-secret carry it. */
export class WebhookWithSecret extends Schema.Class<WebhookWithSecret>("WebhookWithSecret")({
  objects: Schema.Tuple(Webhook),
  secret: Schema.String.annotations({ description: "The signing secret, shown this once" })
}) {}

export class DeliveryList extends Schema.Class<DeliveryList>("WebhookDeliveryList")({
  objects: Schema.Array(WebhookDelivery),
  meta: Meta
}) {}

const DeliveriesPage = Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), Schema.lessThanOrEqualTo(1_000_000), coded(10807))

/** Webhooks of a domain (an extension of the API): account admins and admins of the domain. */
export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .annotate(OpenApi.Title, "Webhooks (extension)")
  .annotate(
    OpenApi.Description,
    "Signed webhooks per domain (an extension): link.created, link.updated, link.archived, link.deleted and link.clicked (in batches), each delivery signed with Webhook-Signature, retried with backoff and logged"
  )
  .add(
    HttpApiEndpoint.get("list")`/${domainId}/webhooks`
      .addSuccess(WebhookList)
      .addError(answers(DomainNotFound))
      .addError(answers(NotWebhookAdmin))
      .annotate(OpenApi.Summary, "List webhooks")
      .annotate(OpenApi.Description, "The domain's webhooks, by id (at most 10 active, 100 in all); secrets are never shown here")
  )
  .add(
    HttpApiEndpoint.post("create")`/${domainId}/webhooks`
      .setPayload(CreateWebhook)
      .addError(BodyTooLarge)
      .addError(BodyTimeout)
      .addSuccess(WebhookWithSecret)
      .addError(answers(DomainNotFound))
      .addError(answers(NotWebhookAdmin))
      .addError(answers(TooManyWebhooks))
      .addError(answersInvalidInput(10802, 10803, 10804, 10805, 10153))
      .annotate(OpenApi.Summary, "Create a webhook")
      .annotate(
        OpenApi.Description,
        "A webhook receiving the events named; its URL must not lead to a private, loopback or reserved address. The answer carries the signing secret, shown this once"
      )
  )
  .add(
    HttpApiEndpoint.get("byId")`/${domainId}/webhooks/${webhookId}`
      .addSuccess(WebhookList)
      .addError(answers(DomainNotFound))
      .addError(answers(NotWebhookAdmin))
      .addError(answers(WebhookNotFound))
      .annotate(OpenApi.Summary, "Get a webhook")
  )
  .add(
    HttpApiEndpoint.patch("update")`/${domainId}/webhooks/${webhookId}`
      .setPayload(UpdateWebhook)
      .addError(BodyTooLarge)
      .addError(BodyTimeout)
      .addSuccess(WebhookList)
      .addError(answers(DomainNotFound))
      .addError(answers(NotWebhookAdmin))
      .addError(answers(WebhookNotFound))
      .addError(answers(NothingToUpdate))
      .addError(answers(TooManyWebhooks))
      .addError(answersInvalidInput(10802, 10803, 10804, 10805, 10153))
      .annotate(OpenApi.Summary, "Update a webhook")
      .annotate(OpenApi.Description, "Changes url, events or active (an inactive webhook's pending deliveries wait)")
  )
  .add(
    HttpApiEndpoint.del("remove")`/${domainId}/webhooks/${webhookId}`
      .addSuccess(Schema.Struct({}))
      .addError(answers(DomainNotFound))
      .addError(answers(NotWebhookAdmin))
      .addError(answers(WebhookNotFound))
      .annotate(OpenApi.Summary, "Delete a webhook")
      .annotate(OpenApi.Description, "Deletes the webhook with its pending deliveries and its delivery log")
  )
  .add(
    HttpApiEndpoint.post("rotateSecret")`/${domainId}/webhooks/${webhookId}/rotate-secret`
      .addSuccess(WebhookWithSecret)
      .addError(answers(DomainNotFound))
      .addError(answers(NotWebhookAdmin))
      .addError(answers(WebhookNotFound))
      .annotate(OpenApi.Summary, "Rotate a webhook's secret")
      .annotate(
        OpenApi.Description,
        "A new signing secret, shown this once; for 24 hours deliveries carry a signature by the previous secret too (previous_secret_until)"
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries")`/${domainId}/webhooks/${webhookId}/deliveries`
      .setUrlParams(Schema.Struct({ page: Schema.optional(documentedInteger(1, 1_000_000)(DeliveriesPage)) }))
      .addSuccess(DeliveryList)
      .addError(answers(DomainNotFound))
      .addError(answers(NotWebhookAdmin))
      .addError(answers(WebhookNotFound))
      .addError(answersInvalidInput(10807, 10153))
      .annotate(OpenApi.Summary, "List a webhook's deliveries")
      .annotate(OpenApi.Description, "The delivery log, newest first, 50 a page: each delivery's state and every attempt (status, duration, error, next attempt)")
  )
  .add(
    HttpApiEndpoint.post("replay")`/${domainId}/webhooks/${webhookId}/deliveries/${deliveryId}/replay`
      .addSuccess(Schema.Struct({ objects: Schema.Tuple(WebhookDelivery) }))
      .addError(answers(DomainNotFound))
      .addError(answers(NotWebhookAdmin))
      .addError(answers(WebhookNotFound))
      .addError(answers(DeliveryNotFound))
      .annotate(OpenApi.Summary, "Replay a delivery")
      .annotate(OpenApi.Description, "Sends the delivery again (same body, same Webhook-Id) as a new attempt, with a new retry window")
  )
  .middleware(Authentication) {}
