import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { Links } from "./Links.ts"

export const LinksHttpLive = HttpApiBuilder.group(Api, "links", (handlers) =>
  Effect.gen(function* () {
    const links = yield* Links
    return handlers
      .handle("validate", ({ payload }) => Effect.map(links.validate(payload.url), (url) => ({ objects: [{ url }] })))
      .handle("byId", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => links.get(caller, path.domain_id, path.link_id)).pipe(
          Effect.map((link) => ({ objects: [link] }))
        )
      )
      .handle("qr", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => links.qr(caller, path.domain_id, path.link_id, urlParams.format ?? "png")).pipe(
          Effect.map((image) => HttpServerResponse.uint8Array(image.body, { contentType: image.contentType }))
        )
      )
      .handle("byAlias", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => links.byAlias(caller, path.domain_id, urlParams.alias ?? "")).pipe(
          Effect.map((link) => ({ objects: [link] }))
        )
      )
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => links.update(caller, path.domain_id, path.link_id, payload)).pipe(
          Effect.map((link) => ({ objects: [link] }))
        )
      )
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => links.create(caller, path.domain_id, payload)).pipe(
          Effect.map(({ link, created }) => ({ objects: [link], new_link: created ? 1 : 0 }))
        )
      )
  })
)
