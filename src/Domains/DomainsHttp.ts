import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { pageRequest } from "../Platform/ApiVersion.ts"
import { makeMeta } from "../Platform/Pagination.ts"
import { requestPath } from "../Platform/RequestUrl.ts"
import type { Domain } from "./Domain.ts"
import { Domains } from "./Domains.ts"

const single = (domain: Domain, path: string) =>
  Effect.map(pageRequest(1), (page) => ({ objects: [domain], meta: makeMeta(page, 1, 1, path) }))

export const DomainsHttpLive = HttpApiBuilder.group(Api, "domains", (handlers) =>
  Effect.gen(function* () {
    const domains = yield* Domains
    return handlers
      .handle("list", ({ urlParams, request }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentUser
          const path = requestPath(request)
          if (urlParams.domain_name !== undefined) return yield* single(yield* domains.byName(caller, urlParams.domain_name), path)
          const page = yield* pageRequest(urlParams.page)
          const { domains: found, total } = yield* domains.listActive(caller, page)
          return { objects: found, meta: makeMeta(page, found.length, total, path) }
        })
      )
      .handle("byId", ({ path, request }) =>
        Effect.flatMap(CurrentUser, (caller) => domains.byId(caller, path.domain_id)).pipe(
          Effect.flatMap((domain) => single(domain, requestPath(request)))
        )
      )
      .handle("create", ({ payload, request }) =>
        Effect.flatMap(CurrentUser, (caller) => domains.create(caller, payload)).pipe(
          Effect.flatMap((domain) => single(domain, requestPath(request)))
        )
      )
      .handle("update", ({ path, payload, request }) =>
        Effect.flatMap(CurrentUser, (caller) => domains.update(caller, path.domain_id, payload)).pipe(
          Effect.flatMap((domain) => single(domain, requestPath(request)))
        )
      )
      .handle("remove", ({ path }) => Effect.flatMap(CurrentUser, (caller) => domains.remove(caller, path.domain_id)).pipe(Effect.as({})))
  })
)
