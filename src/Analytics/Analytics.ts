import { Clock, Duration, Effect, Option } from "effect"
import type { Caller } from "../Accounts/User.ts"
import type { RollupKind } from "../Clicks/Rollups.ts"
import { AppConfig } from "../Config.ts"
import { DomainAccess } from "../Domains/DomainAccess.ts"
import type { DomainNotFound } from "../Domains/DomainErrors.ts"
import { viewerOf as linksViewerOf } from "../Links/LinkAccess.ts"
import { LinkNotFound } from "../Links/LinkErrors.ts"
import { LinkRepo, type Viewer } from "../Links/LinkRepo.ts"
import { Groups } from "../Groups/Groups.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { keyedGate } from "../Platform/KeyedGate.ts"
import { offsetOf, type PageRequest } from "../Platform/Pagination.ts"
import {
  FilterValueInvalid,
  PlanWithoutAnalytics,
  ReportsBusy,
  ReportTooSlow,
  UserFilterForbidden,
  UserFilterInvalid
} from "./AnalyticsErrors.ts"
import { AnalyticsRepo, type GroupRow, type LinkFilter, type Scope, type ValueFilters } from "./AnalyticsRepo.ts"
import type { CityRow, CountryRow, DayRow, DeviceRow, HourRow, ReferrerRow, RegionRow } from "./AnalyticsRows.ts"
import { type AnalyticsWindow, analyticsWindow, daysOf, isoDate } from "./AnalyticsWindow.ts"

/** A report's window in Unix seconds, `to_unix` exclusive; neither bound: the last seven days and today. */
export interface WindowBounds {
  readonly from_unix?: number | undefined
  readonly to_unix?: number | undefined
}

/** Whose links a report counts, as the request gives them: `user_id` (an id or `all`), `label_id` (a tag's id), `keyword`. */
export interface LinkFilters extends WindowBounds {
  readonly user_id?: string | undefined
  readonly label_id?: string | undefined
  readonly keyword?: string | undefined
}

/** E22 can narrow a domain's referrers to one of its links. */
export interface DomainReferrerFilters extends LinkFilters, ValueFilters {
  readonly link_id?: number | undefined
}

/** E16: only the caller's links (`from_user: "me"`), a keyword, a tag by name, a group the caller sees. */
export interface ClickedFilters extends WindowBounds {
  readonly from_user?: "me" | undefined
  readonly keyword?: string | undefined
  readonly tag?: string | undefined
  readonly group_id?: number | undefined
}

/** One page of a report's rows, and how many rows the report has. */
export interface Rows<A> {
  readonly rows: ReadonlyArray<A>
  readonly total: number
}

const POSITIVE = /^[1-9][0-9]{0,15}$/

const limitOf = (page: PageRequest) => ({ limit: page.perPage, offset: offsetOf(page) })

/** Clicks of one link that is not deleted, whoever owns it. */
const oneLink = (domainId: number, linkId: number): Scope => ({
  _tag: "links",
  filter: { domainId, userId: "all", linkId, includeDeleted: false }
})

/**
 * The click analytics use cases (E16-E30, R1): on the Team, Business and Enterprise plans only
 * (checked first), over a domain of the caller's account and the links the caller sees of it, in a
 * window of at most a year. Each runs within ANALYTICS_TIMEOUT_SECONDS and the account's
 * ANALYTICS_CONCURRENCY_PER_ACCOUNT (`limited`).
 */
export class Analytics extends Effect.Service<Analytics>()("Analytics", {
  effect: Effect.gen(function* () {
    const repo = yield* AnalyticsRepo
    const links = yield* LinkRepo
    const groups = yield* Groups
    const access = yield* DomainAccess
    const config = yield* AppConfig
    const running = keyedGate<number>(config.analyticsConcurrencyPerAccount)
    const timeLimit = Duration.seconds(config.analyticsTimeoutSeconds)

    /**
     * A use case within its account's share of concurrent reports and the time limit. It runs
     * disconnected: at the limit the caller gets 10508 at once while the report's fiber is interrupted
     * in the background, which cancels its statement on PostgreSQL (a cancel that cannot get a
     * connection at once would otherwise delay the answer); its slot is free once it has stopped.
     */
    const limited =
      <Args extends readonly [Caller, ...Array<unknown>], A, E, R>(useCase: (...args: Args) => Effect.Effect<A, E, R>) =>
      (...args: Args): Effect.Effect<A, E | ReportsBusy | ReportTooSlow, R> =>
        Effect.disconnect(running.run(args[0].accountId, () => ReportsBusy.of(), useCase(...args))).pipe(
          Effect.timeoutFail({ duration: timeLimit, onTimeout: () => ReportTooSlow.of() })
        )

    const windowOf = (bounds: WindowBounds) =>
      Effect.flatMap(Clock.currentTimeMillis, (millis) => analyticsWindow(Math.floor(millis / 1000), bounds.from_unix, bounds.to_unix))

    /** The plan first, then the domain as the caller sees it, disabled or not. */
    const viewerOf = (caller: Caller, domainId: number): Effect.Effect<Viewer, PlanWithoutAnalytics | DomainNotFound> =>
      caller.plan === "free" ? Effect.fail(PlanWithoutAnalytics.of()) : linksViewerOf(access, caller, domainId, { activeOnly: false })

    const requireVisibleLink = (domainId: number, linkId: number, viewer: Viewer) =>
      Effect.flatMap(links.byId(domainId, linkId, viewer), (link) => (Option.isNone(link) ? Effect.fail(LinkNotFound.of()) : Effect.void))

    const linkViewerOf = (caller: Caller, domainId: number, linkId: number) =>
      Effect.tap(viewerOf(caller, domainId), (viewer) => requireVisibleLink(domainId, linkId, viewer))

    /** `user_id`: the caller, `all` or another user of the account; the last two need to see all links. */
    const ownerOf = (caller: Caller, viewer: Viewer, raw: string | undefined, fallback: number | "all") =>
      Effect.gen(function* () {
        if (raw === undefined) return fallback
        if (raw !== "all" && !POSITIVE.test(raw)) return yield* Effect.fail(UserFilterInvalid.of())
        const userId = raw === "all" ? "all" : Number(raw)
        if (userId === caller.userId) return userId
        if (userId !== "all" && !(yield* repo.userInAccount(userId, caller.accountId))) return yield* Effect.fail(UserFilterInvalid.of())
        if (!viewer.seesAll) return yield* Effect.fail(UserFilterForbidden.of())
        return userId
      })

    const linkFilterOf = (
      caller: Caller,
      viewer: Viewer,
      domainId: number,
      filters: LinkFilters,
      defaults: { readonly owner: number | "all"; readonly includeDeleted: boolean; readonly linkId?: number }
    ) =>
      Effect.gen(function* () {
        const userId = yield* ownerOf(caller, viewer, filters.user_id, defaults.owner)
        let tagId: number | undefined
        if (filters.label_id !== undefined) {
          tagId = POSITIVE.test(filters.label_id) ? Number(filters.label_id) : undefined
          if (tagId === undefined || !(yield* repo.tagVisible(tagId, domainId, caller.userId))) {
            return yield* Effect.fail(FilterValueInvalid.of("label_id"))
          }
        }
        const filter: LinkFilter = {
          domainId,
          userId,
          linkId: defaults.linkId,
          tagId,
          keyword: filters.keyword,
          includeDeleted: defaults.includeDeleted
        }
        return filter
      })

    /**
     * A domain report counts the caller's own links unless `user_id` says otherwise, deleted ones
     * included unless it is narrowed to one link, from the per-owner rollups unless a filter needs
     * the links themselves.
     */
    const domainScope = (caller: Caller, viewer: Viewer, domainId: number, filters: LinkFilters, linkId: number | undefined) =>
      Effect.map(
        linkFilterOf(caller, viewer, domainId, filters, {
          owner: caller.userId,
          includeDeleted: linkId === undefined,
          ...(linkId === undefined ? {} : { linkId })
        }),
        (filter): Scope => {
          const byLinks = filter.linkId !== undefined || filter.tagId !== undefined || (filter.keyword ?? "") !== ""
          return byLinks ? { _tag: "links", filter } : { _tag: "owners", domainId, userId: filter.userId }
        }
      )

    /** A link report counts the link's clicks, whoever owns it unless `user_id` says otherwise. */
    const linkScope = (caller: Caller, domainId: number, linkId: number, filters: LinkFilters) =>
      Effect.gen(function* () {
        const viewer = yield* linkViewerOf(caller, domainId, linkId)
        const filter = yield* linkFilterOf(caller, viewer, domainId, filters, { owner: "all", includeDeleted: false, linkId })
        const scope: Scope = { _tag: "links", filter }
        return scope
      })

    /** One row per UTC day the window touches, days without clicks included. */
    const daily = (scope: Scope, filters: LinkFilters, page: PageRequest) =>
      Effect.gen(function* () {
        const window = yield* windowOf(filters)
        const counted = new Map((yield* repo.byDay(scope, window)).map((row) => [row.day, row]))
        const days = daysOf(window)
        const { limit, offset } = limitOf(page)
        const rows = days.slice(offset, offset + limit).map(
          (day): DayRow => ({
            date: isoDate(day),
            unix_date: day,
            count: counted.get(day)?.count ?? 0,
            scan_count: counted.get(day)?.scans ?? 0
          })
        )
        return { rows, total: days.length }
      })

    const grouped =
      <R>(kind: RollupKind, width: 1 | 2 | 3, shape: (row: GroupRow) => R) =>
      (scope: Scope, filters: LinkFilters & ValueFilters, page: PageRequest) =>
        Effect.gen(function* () {
          const window = yield* windowOf(filters)
          const found = yield* repo.grouped(scope, kind, width, window, filters, limitOf(page))
          return { rows: found.rows.map(shape), total: found.total }
        })

    // A place's value is its country.
    const byCountry = grouped("place", 1, (row): CountryRow => ({ country: row.value, count: row.count }))
    const byRegion = grouped("place", 2, (row): RegionRow => ({ country: row.value, region: row.region, count: row.count }))
    const byCity = grouped("place", 3, (row): CityRow => ({ country: row.value, region: row.region, city: row.city, count: row.count }))
    const byDevice = grouped("device", 1, (row): DeviceRow => ({ device: row.value ?? "other", count: row.count }))
    const byReferrer = grouped("referrer", 1, (row): ReferrerRow => ({ referrer: row.value ?? "direct", count: row.count }))

    const ofDomain =
      <F extends LinkFilters, A, E, R>(report: (scope: Scope, filters: F, page: PageRequest) => Effect.Effect<Rows<A>, E, R>) =>
      (caller: Caller, domainId: number, filters: F, page: PageRequest) =>
        viewerOf(caller, domainId).pipe(
          Effect.flatMap((viewer) => domainScope(caller, viewer, domainId, filters, undefined)),
          Effect.flatMap((scope) => report(scope, filters, page)),
          orDieOnInfrastructure
        )

    /** E22: the domain's referrers, or those of one link of it the caller sees. */
    const domainReferrers = (caller: Caller, domainId: number, filters: DomainReferrerFilters, page: PageRequest) =>
      Effect.gen(function* () {
        const viewer = yield* viewerOf(caller, domainId)
        if (filters.link_id !== undefined) yield* requireVisibleLink(domainId, filters.link_id, viewer)
        const scope = yield* domainScope(caller, viewer, domainId, filters, filters.link_id)
        return yield* byReferrer(scope, filters, page)
      }).pipe(orDieOnInfrastructure)

    const ofLink =
      <F extends LinkFilters, A, E, R>(report: (scope: Scope, filters: F, page: PageRequest) => Effect.Effect<Rows<A>, E, R>) =>
      (caller: Caller, domainId: number, linkId: number, filters: F, page: PageRequest) =>
        Effect.flatMap(linkScope(caller, domainId, linkId, filters), (scope) => report(scope, filters, page)).pipe(orDieOnInfrastructure)

    /** E16: the domain's links with clicks in the window, most clicked first; all of them for those who see all. */
    const clickedLinks = (caller: Caller, domainId: number, filters: ClickedFilters, page: PageRequest) =>
      Effect.gen(function* () {
        const viewer = yield* viewerOf(caller, domainId)
        const window = yield* windowOf(filters)
        const userId = filters.from_user === "me" || !viewer.seesAll ? caller.userId : "all"
        if (filters.group_id !== undefined) yield* groups.requireVisible(caller, domainId, filters.group_id)
        const filter: LinkFilter = {
          domainId,
          userId,
          tagName: filters.tag,
          groupId: filters.group_id,
          keyword: filters.keyword,
          includeDeleted: false
        }
        const found = yield* repo.clickedLinks(filter, window, limitOf(page))
        return { rows: yield* links.clickedByIds(found.ids, viewer), total: found.total }
      }).pipe(orDieOnInfrastructure)

    /** E23: the link's lifetime figures without a window, the window's count with one. */
    const linkTotals = (caller: Caller, domainId: number, linkId: number, bounds: WindowBounds) =>
      Effect.gen(function* () {
        yield* linkViewerOf(caller, domainId, linkId)
        if (bounds.from_unix === undefined && bounds.to_unix === undefined) {
          const { total, unique, scans } = yield* repo.lifetime(linkId)
          return { total, unique, scan_count: scans }
        }
        const window = yield* windowOf(bounds)
        const days = yield* repo.byDay(oneLink(domainId, linkId), window)
        return { count: days.reduce((sum, day) => sum + day.count, 0) }
      }).pipe(orDieOnInfrastructure)

    /** E24: the link's clicks per hour of the UTC day, all 24 hours. */
    const linkHourly = (caller: Caller, domainId: number, linkId: number, bounds: WindowBounds, page: PageRequest) =>
      Effect.gen(function* () {
        yield* linkViewerOf(caller, domainId, linkId)
        const window = yield* windowOf(bounds)
        const counted = new Map((yield* repo.byHour(oneLink(domainId, linkId), window)).map((row) => [Number(row.hour), row]))
        const hours = Array.from({ length: 24 }, (_, hour): HourRow => ({
          hour,
          count: counted.get(hour)?.count ?? 0,
          scan_count: counted.get(hour)?.scans ?? 0
        }))
        const { limit, offset } = limitOf(page)
        return { rows: hours.slice(offset, offset + limit), total: hours.length }
      }).pipe(orDieOnInfrastructure)

    /** R1: the link's clicks as recorded, bots included, newest first. */
    const rawClicks = (caller: Caller, domainId: number, linkId: number, page: PageRequest) =>
      Effect.gen(function* () {
        yield* linkViewerOf(caller, domainId, linkId)
        return yield* repo.rawClicks(linkId, limitOf(page))
      }).pipe(orDieOnInfrastructure)

    /** A report of one link over a window by `count`, under the rules of E25-E30 (the smart links' destinations report). */
    const linkWindowed = <A, E, R>(
      caller: Caller,
      domainId: number,
      linkId: number,
      bounds: WindowBounds,
      count: (window: AnalyticsWindow) => Effect.Effect<A, E, R>
    ) =>
      limited((asker: Caller) =>
        Effect.gen(function* () {
          yield* linkViewerOf(asker, domainId, linkId)
          return yield* count(yield* windowOf(bounds))
        }).pipe(orDieOnInfrastructure)
      )(caller)

    return {
      clickedLinks: limited(clickedLinks),
      linkWindowed,
      /** E17-E22. */
      domain: {
        daily: limited(ofDomain(daily)),
        country: limited(ofDomain(byCountry)),
        region: limited(ofDomain(byRegion)),
        city: limited(ofDomain(byCity)),
        device: limited(ofDomain(byDevice)),
        referrer: limited(domainReferrers)
      },
      linkTotals: limited(linkTotals),
      linkHourly: limited(linkHourly),
      /** E25-E30. */
      link: {
        daily: limited(ofLink(daily)),
        country: limited(ofLink(byCountry)),
        region: limited(ofLink(byRegion)),
        city: limited(ofLink(byCity)),
        device: limited(ofLink(byDevice)),
        referrer: limited(ofLink(byReferrer))
      },
      rawClicks: limited(rawClicks),
      /** How many accounts have a report running (entries are dropped at 0). */
      accountsReporting: running.keys
    } as const
  }),
  dependencies: [AnalyticsRepo.Default, LinkRepo.Default, DomainAccess.Default, Groups.Default]
}) {}
