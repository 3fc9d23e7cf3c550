import { HttpApiBuilder, type HttpServerRequest } from "@effect/platform"
import { Clock, Effect, Either, Option } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { analyticsWindow, daysOf, isoDate } from "./AnalyticsWindow.ts"
import { ApiError } from "../Platform/ApiError.ts"
import { makeMeta, offsetOf, type PageRequest } from "../Platform/Pagination.ts"
import { pageRequest } from "../Platform/ApiVersion.ts"
import type { Caller } from "../Accounts/User.ts"
import { AnalyticsRepo, type GroupRow, type LinkFilter, type Scope, type ValueFilters } from "./AnalyticsRepo.ts"
import type { RollupKind } from "../Clicks/Rollups.ts"
import { LinkRepo, type Viewer } from "../Links/LinkRepo.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { viewerOf } from "../Links/LinkAccess.ts"
import { pageLinks, requestPath } from "../Platform/RequestUrl.ts"

interface WindowParams {
  readonly from_unix?: number | undefined
  readonly to_unix?: number | undefined
}

interface SharedParams extends WindowParams {
  readonly page?: number | undefined
  readonly user_id?: string | undefined
  readonly label_id?: string | undefined
  readonly keyword?: string | undefined
}

const POSITIVE = /^[1-9][0-9]{0,15}$/

/** A paginated answer: `objects` of the page, `links` and `meta` (CONTRACT §9). */
const paged = <A>(request: HttpServerRequest.HttpServerRequest, page: PageRequest, objects: ReadonlyArray<A>, total: number) => {
  const lastPage = Math.max(1, Math.ceil(total / page.perPage))
  return {
    objects,
    links: pageLinks(request, page.page, lastPage),
    meta: makeMeta(page, objects.length, total, requestPath(request))
  }
}

const pageOf = (params: { readonly page?: number | undefined }) => pageRequest(params.page)

const limitOf = (page: PageRequest) => ({ limit: page.perPage, offset: offsetOf(page) })

export const AnalyticsHttpLive = HttpApiBuilder.group(Api, "analytics", (handlers) =>
  Effect.gen(function* () {
    const analytics = yield* AnalyticsRepo
    const links = yield* LinkRepo

    const windowOf = (params: WindowParams) =>
      Effect.flatMap(Clock.currentTimeMillis, (millis) =>
        Either.match(analyticsWindow(Math.floor(millis / 1000), params.from_unix, params.to_unix), {
          onLeft: (code) => Effect.fail(ApiError.of(code)),
          onRight: Effect.succeed
        })
      )

    /** The plan first (403 10504), then the domain as the caller sees it (404 10101). */
    const domainAccess = (domainId: number) =>
      Effect.gen(function* () {
        const caller = yield* CurrentUser
        if (caller.plan === "free") return yield* ApiError.of(10504)
        const viewer = yield* viewerOf(caller, domainId, { activeOnly: false })
        return { caller, viewer }
      })

    const linkAccess = (domainId: number, linkId: number) =>
      Effect.gen(function* () {
        const access = yield* domainAccess(domainId)
        const link = yield* links.byId(domainId, linkId, access.viewer)
        if (Option.isNone(link)) return yield* ApiError.of(10150)
        return { ...access, link: link.value }
      })

    /** `user_id`: the caller, `all` or another user of the account; the last two need to see all links. */
    const ownerOf = (caller: Caller, viewer: Viewer, raw: string | undefined, fallback: number | "all") =>
      Effect.gen(function* () {
        if (raw === undefined) return fallback
        if (raw !== "all" && !POSITIVE.test(raw)) return yield* ApiError.of(10506)
        const userId = raw === "all" ? "all" : Number(raw)
        if (userId === caller.userId) return userId
        if (userId !== "all" && !(yield* analytics.userInAccount(userId, caller.accountId))) return yield* ApiError.of(10506)
        if (!viewer.seesAll) return yield* ApiError.of(10003)
        return userId
      })

    /** The link filters of the shared parameters (`user_id`, `label_id`, `keyword`). */
    const linkFilterOf = (
      access: { readonly caller: Caller; readonly viewer: Viewer },
      domainId: number,
      params: SharedParams,
      defaults: { readonly owner: number | "all"; readonly includeDeleted: boolean; readonly linkId?: number }
    ) =>
      Effect.gen(function* () {
        const userId = yield* ownerOf(access.caller, access.viewer, params.user_id, defaults.owner)
        let tagId: number | undefined
        if (params.label_id !== undefined) {
          tagId = POSITIVE.test(params.label_id) ? Number(params.label_id) : undefined
          if (tagId === undefined || !(yield* analytics.tagVisible(tagId, domainId, access.caller.userId))) {
            return yield* ApiError.of(10507, "label_id")
          }
        }
        const filter: LinkFilter = {
          domainId,
          userId,
          linkId: defaults.linkId,
          tagId,
          keyword: params.keyword,
          includeDeleted: defaults.includeDeleted
        }
        return filter
      })

    /** A domain report reads the per-owner rollups unless a filter needs the links themselves. */
    const domainScope = (domainId: number, params: SharedParams & { readonly link_id?: number | undefined }) =>
      Effect.gen(function* () {
        const access = yield* domainAccess(domainId)
        if (params.link_id !== undefined && Option.isNone(yield* links.byId(domainId, params.link_id, access.viewer))) {
          return yield* ApiError.of(10150)
        }
        const filter = yield* linkFilterOf(access, domainId, params, {
          owner: access.caller.userId,
          includeDeleted: params.link_id === undefined,
          ...(params.link_id === undefined ? {} : { linkId: params.link_id })
        })
        const byLinks = filter.linkId !== undefined || filter.tagId !== undefined || (filter.keyword ?? "") !== ""
        const scope: Scope = byLinks ? { _tag: "links", filter } : { _tag: "owners", domainId, userId: filter.userId }
        return scope
      })

    const linkScope = (domainId: number, linkId: number, params: SharedParams) =>
      Effect.gen(function* () {
        const access = yield* linkAccess(domainId, linkId)
        const filter = yield* linkFilterOf(access, domainId, params, { owner: "all", includeDeleted: false, linkId })
        const scope: Scope = { _tag: "links", filter }
        return scope
      })

    const daily = (request: HttpServerRequest.HttpServerRequest, scope: Scope, params: SharedParams) =>
      Effect.gen(function* () {
        const window = yield* windowOf(params)
        const page = yield* pageOf(params)
        const counted = new Map((yield* analytics.byDay(scope, window)).map((row) => [row.day, row]))
        const days = daysOf(window)
        const { limit, offset } = limitOf(page)
        const rows = days.slice(offset, offset + limit).map((day) => ({
          date: isoDate(day),
          unix_date: day,
          count: counted.get(day)?.count ?? 0,
          scan_count: counted.get(day)?.scans ?? 0
        }))
        return paged(request, page, rows, days.length)
      })

    const grouped =
      <R>(kind: RollupKind, width: 1 | 2 | 3, shape: (row: GroupRow) => R) =>
      (request: HttpServerRequest.HttpServerRequest, scope: Scope, params: SharedParams & ValueFilters) =>
        Effect.gen(function* () {
          const window = yield* windowOf(params)
          const page = yield* pageOf(params)
          const found = yield* analytics.grouped(scope, kind, width, window, params, limitOf(page))
          return paged(request, page, found.rows.map(shape), found.total)
        })

    // A place's value is its country.
    const byCountry = grouped("place", 1, (row) => ({ country: row.value, count: row.count }))
    const byRegion = grouped("place", 2, (row) => ({ country: row.value, region: row.region, count: row.count }))
    const byCity = grouped("place", 3, (row) => ({ country: row.value, region: row.region, city: row.city, count: row.count }))
    const byDevice = grouped("device", 1, (row) => ({ device: row.value ?? "other", count: row.count }))
    const byReferrer = grouped("referrer", 1, (row) => ({ referrer: row.value ?? "direct", count: row.count }))

    return handlers
      .handle("clicked", ({ path, urlParams, request }) =>
        Effect.gen(function* () {
          const { caller, viewer } = yield* domainAccess(path.domain_id)
          const window = yield* windowOf(urlParams)
          const page = yield* pageOf(urlParams)
          const userId = urlParams.from_user === "me" || !viewer.seesAll ? caller.userId : "all"
          const filter: LinkFilter = { domainId: path.domain_id, userId, tagName: urlParams.tag, keyword: urlParams.keyword, includeDeleted: false }
          const found = yield* analytics.clickedLinks(filter, window, limitOf(page))
          return paged(request, page, yield* links.clickedByIds(found.ids), found.total)
        }).pipe(orDieOnInfrastructure)
      )
      .handle("domain_daily", ({ path, urlParams, request }) =>
        Effect.flatMap(domainScope(path.domain_id, urlParams), (scope) => daily(request, scope, urlParams)).pipe(orDieOnInfrastructure)
      )
      .handle("domain_country", ({ path, urlParams, request }) =>
        Effect.flatMap(domainScope(path.domain_id, urlParams), (scope) => byCountry(request, scope, urlParams)).pipe(orDieOnInfrastructure)
      )
      .handle("domain_region", ({ path, urlParams, request }) =>
        Effect.flatMap(domainScope(path.domain_id, urlParams), (scope) => byRegion(request, scope, urlParams)).pipe(orDieOnInfrastructure)
      )
      .handle("domain_city", ({ path, urlParams, request }) =>
        Effect.flatMap(domainScope(path.domain_id, urlParams), (scope) => byCity(request, scope, urlParams)).pipe(orDieOnInfrastructure)
      )
      .handle("domain_device", ({ path, urlParams, request }) =>
        Effect.flatMap(domainScope(path.domain_id, urlParams), (scope) => byDevice(request, scope, urlParams)).pipe(orDieOnInfrastructure)
      )
      .handle("domain_referrer", ({ path, urlParams, request }) =>
        Effect.flatMap(domainScope(path.domain_id, urlParams), (scope) => byReferrer(request, scope, urlParams)).pipe(orDieOnInfrastructure)
      )
      .handle("link_totals", ({ path, urlParams }) =>
        Effect.gen(function* () {
          yield* linkAccess(path.domain_id, path.link_id)
          if (urlParams.from_unix === undefined && urlParams.to_unix === undefined) {
            const { total, unique, scans } = yield* analytics.lifetime(path.link_id)
            return { total, unique, scan_count: scans }
          }
          const window = yield* windowOf(urlParams)
          const scope: Scope = { _tag: "links", filter: { domainId: path.domain_id, userId: "all", linkId: path.link_id, includeDeleted: false } }
          const days = yield* analytics.byDay(scope, window)
          return { count: days.reduce((sum, day) => sum + day.count, 0) }
        }).pipe(orDieOnInfrastructure)
      )
      .handle("link_hourly", ({ path, urlParams, request }) =>
        Effect.gen(function* () {
          yield* linkAccess(path.domain_id, path.link_id)
          const window = yield* windowOf(urlParams)
          const page = yield* pageOf(urlParams)
          const scope: Scope = { _tag: "links", filter: { domainId: path.domain_id, userId: "all", linkId: path.link_id, includeDeleted: false } }
          const counted = new Map((yield* analytics.byHour(scope, window)).map((row) => [Number(row.hour), row.count]))
          const hours = Array.from({ length: 24 }, (_, hour) => ({ hour, count: counted.get(hour) ?? 0 }))
          const { limit, offset } = limitOf(page)
          return paged(request, page, hours.slice(offset, offset + limit), hours.length)
        }).pipe(orDieOnInfrastructure)
      )
      .handle("link_daily", ({ path, urlParams, request }) =>
        Effect.flatMap(linkScope(path.domain_id, path.link_id, urlParams), (scope) => daily(request, scope, urlParams)).pipe(orDieOnInfrastructure)
      )
      .handle("link_country", ({ path, urlParams, request }) =>
        Effect.flatMap(linkScope(path.domain_id, path.link_id, urlParams), (scope) => byCountry(request, scope, urlParams)).pipe(
          orDieOnInfrastructure
        )
      )
      .handle("link_region", ({ path, urlParams, request }) =>
        Effect.flatMap(linkScope(path.domain_id, path.link_id, urlParams), (scope) => byRegion(request, scope, urlParams)).pipe(
          orDieOnInfrastructure
        )
      )
      .handle("link_city", ({ path, urlParams, request }) =>
        Effect.flatMap(linkScope(path.domain_id, path.link_id, urlParams), (scope) => byCity(request, scope, urlParams)).pipe(orDieOnInfrastructure)
      )
      .handle("link_device", ({ path, urlParams, request }) =>
        Effect.flatMap(linkScope(path.domain_id, path.link_id, urlParams), (scope) => byDevice(request, scope, urlParams)).pipe(
          orDieOnInfrastructure
        )
      )
      .handle("link_referrer", ({ path, urlParams, request }) =>
        Effect.flatMap(linkScope(path.domain_id, path.link_id, urlParams), (scope) => byReferrer(request, scope, urlParams)).pipe(
          orDieOnInfrastructure
        )
      )
      .handle("raw_clicks", ({ path, urlParams, request }) =>
        Effect.gen(function* () {
          yield* linkAccess(path.domain_id, path.link_id)
          const page = yield* pageOf(urlParams)
          const found = yield* analytics.rawClicks(path.link_id, limitOf(page))
          return paged(request, page, found.rows, found.total)
        }).pipe(orDieOnInfrastructure)
      )
  })
)
