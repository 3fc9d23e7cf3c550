import { Schema } from "effect"
import { Unset } from "../Platform/Unset.ts"

export const WEBHOOK_EVENTS = ["link.created", "link.updated", "link.archived", "link.deleted", "link.clicked"] as const
export const WebhookEvent = Schema.Literal(...WEBHOOK_EVENTS)
export type WebhookEvent = typeof WebhookEvent.Type

/** A webhook as the API shows it; its secret never appears here (only once, on create and rotation). */
export class Webhook extends Schema.Class<Webhook>("Webhook")({
  id: Schema.Int,
  domain_id: Schema.Int,
  url: Schema.String,
  events: Schema.Array(WebhookEvent),
  active: Schema.Boolean,
  created: Schema.Int,
  modified: Schema.Int,
  /** After a rotation: until when the previous secret still signs deliveries, beside the new one. */
  previous_secret_until: Unset(Schema.Int)
}) {}

export const DeliveryState = Schema.Literal("pending", "delivered", "failed")

/**
 * One try of a delivery: the receiver's status (left out when none came), how long it took, why it
 * failed (left out when it did not), when the next try is due (left out when this was the last).
 */
export class WebhookAttempt extends Schema.Class<WebhookAttempt>("WebhookAttempt")({
  number: Schema.Int,
  at: Schema.Int,
  status: Unset(Schema.Int),
  duration_ms: Schema.Int,
  error: Unset(Schema.String),
  next_attempt: Unset(Schema.Int)
}) {}

/** An event sent to a webhook: its id is the `Webhook-Id` of every attempt; `next_attempt` left out once it is settled. */
export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  id: Schema.Int,
  webhook_id: Schema.Int,
  event: WebhookEvent,
  created: Schema.Int,
  state: DeliveryState,
  next_attempt: Unset(Schema.Int),
  attempts: Schema.Array(WebhookAttempt)
}) {}
