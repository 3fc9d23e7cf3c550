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
          const { domains: found, total, page } = yield* domains.list(caller, { domainName: urlParams.domain_name, page: yield* pageRequest(urlParams.page) })
          return { objects: found, meta: makeMeta(page, found.length, total, requestPath(request)) }
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
