import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { pageRequest } from "../Platform/ApiVersion.ts"
import { makeMeta } from "../Platform/Pagination.ts"
import { requestPath } from "../Platform/RequestUrl.ts"
import { Webhooks } from "./Webhooks.ts"

export const WebhooksHttpLive = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    return handlers
      .handle("list", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => webhooks.list(caller, path.domain_id)).pipe(Effect.map((objects) => ({ objects })))
      )
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => webhooks.create(caller, path.domain_id, payload)).pipe(
          Effect.map(({ webhook, secret }) => ({ objects: [webhook] as const, secret }))
        )
      )
      .handle("byId", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => webhooks.get(caller, path.domain_id, path.webhook_id)).pipe(
          Effect.map((webhook) => ({ objects: [webhook] }))
        )
      )
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => webhooks.update(caller, path.domain_id, path.webhook_id, payload)).pipe(
          Effect.map((webhook) => ({ objects: [webhook] }))
        )
      )
      .handle("remove", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => webhooks.remove(caller, path.domain_id, path.webhook_id)).pipe(Effect.as({}))
      )
      .handle("rotateSecret", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => webhooks.rotateSecret(caller, path.domain_id, path.webhook_id)).pipe(
          Effect.map(({ webhook, secret }) => ({ objects: [webhook] as const, secret }))
        )
      )
      .handle("deliveries", ({ path, urlParams, request }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentUser
          const page = yield* pageRequest(urlParams.page)
          const { deliveries, total } = yield* webhooks.deliveries(caller, path.domain_id, path.webhook_id, page)
          return { objects: deliveries, meta: makeMeta(page, deliveries.length, total, requestPath(request)) }
        })
      )
      .handle("replay", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => webhooks.replay(caller, path.domain_id, path.webhook_id, path.delivery_id)).pipe(
          Effect.map((delivery) => ({ objects: [delivery] as const }))
        )
      )
  })
)
