import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect } from "effect"
import type { Caller } from "../Accounts/User.ts"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { pageRequest } from "../Platform/ApiVersion.ts"
import { makeMeta, type PageRequest } from "../Platform/Pagination.ts"
import { pageLinks, requestPath } from "../Platform/RequestUrl.ts"
import { Analytics, type Rows } from "./Analytics.ts"

/**
 * A report answered as one page: `objects`, `links` (full URLs of the same request at the first,
 * last, previous and next pages) and `meta`, with the page size of the request's API version.
 */
const paged = <A, E, R>(
  request: HttpServerRequest.HttpServerRequest,
  page: number | undefined,
  report: (caller: Caller, page: PageRequest) => Effect.Effect<Rows<A>, E, R>
) =>
  Effect.gen(function* () {
    const caller = yield* CurrentUser
    const pageRequested = yield* pageRequest(page)
    const { rows, total } = yield* report(caller, pageRequested)
    const lastPage = Math.max(1, Math.ceil(total / pageRequested.perPage))
    return {
      objects: rows,
      links: pageLinks(request, pageRequested.page, lastPage),
      meta: makeMeta(pageRequested, rows.length, total, requestPath(request))
    }
  })

export const AnalyticsHttpLive = HttpApiBuilder.group(Api, "analytics", (handlers) =>
  Effect.gen(function* () {
    const analytics = yield* Analytics
    const { domain, link } = analytics
    return handlers
      .handle("clicked", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => analytics.clickedLinks(caller, path.domain_id, urlParams, page))
      )
      .handle("domain_daily", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => domain.daily(caller, path.domain_id, urlParams, page))
      )
      .handle("domain_country", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => domain.country(caller, path.domain_id, urlParams, page))
      )
      .handle("domain_region", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => domain.region(caller, path.domain_id, urlParams, page))
      )
      .handle("domain_city", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => domain.city(caller, path.domain_id, urlParams, page))
      )
      .handle("domain_device", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => domain.device(caller, path.domain_id, urlParams, page))
      )
      .handle("domain_referrer", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => domain.referrer(caller, path.domain_id, urlParams, page))
      )
      .handle("link_totals", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => analytics.linkTotals(caller, path.domain_id, path.link_id, urlParams))
      )
      .handle("link_hourly", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => analytics.linkHourly(caller, path.domain_id, path.link_id, urlParams, page))
      )
      .handle("link_daily", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => link.daily(caller, path.domain_id, path.link_id, urlParams, page))
      )
      .handle("link_country", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => link.country(caller, path.domain_id, path.link_id, urlParams, page))
      )
      .handle("link_region", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => link.region(caller, path.domain_id, path.link_id, urlParams, page))
      )
      .handle("link_city", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => link.city(caller, path.domain_id, path.link_id, urlParams, page))
      )
      .handle("link_device", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => link.device(caller, path.domain_id, path.link_id, urlParams, page))
      )
      .handle("link_referrer", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => link.referrer(caller, path.domain_id, path.link_id, urlParams, page))
      )
      .handle("raw_clicks", ({ path, urlParams, request }) =>
        paged(request, urlParams.page, (caller, page) => analytics.rawClicks(caller, path.domain_id, path.link_id, page))
      )
  })
)
