import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import {
  CityRow,
  ClickedLink,
  CountryRow,
  DayRow,
  DeviceRow,
  HourRow,
  LinkTotals,
  RawClick,
  ReferrerRow,
  RegionRow,
  Report
} from "./AnalyticsRows.ts"
import { Authentication } from "../Auth/Authentication.ts"
import { DomainNotFound } from "../Domains/DomainErrors.ts"
import { LinkNotFound } from "../Links/LinkErrors.ts"
import { GroupNotFound } from "../Groups/GroupErrors.ts"
import { coded, documentedInteger, PathId } from "../Platform/Coded.ts"
import { answers, answersInvalidInput } from "../Platform/Failure.ts"
import { LAST_SECOND, UnixSecond } from "./UnixSecond.ts"
import {
  FilterValueInvalid,
  PlanWithoutAnalytics,
  ReportsBusy,
  ReportTooSlow,
  UserFilterForbidden,
  UserFilterInvalid,
  WindowEndWithoutStart,
  WindowInvalid
} from "./AnalyticsErrors.ts"

const domainId = HttpApiSchema.param("domain_id", PathId(10101))
const linkId = HttpApiSchema.param("link_id", PathId(10150))

const stamp = (code: 10500 | 10501) =>
  Schema.optional(documentedInteger(0, LAST_SECOND)(coded(code)(UnixSecond)))

const text = Schema.optional(coded(10507)(Schema.String.pipe(Schema.maxLength(200))))

const window = { from_unix: stamp(10500), to_unix: stamp(10501) }

const page = {
  page: Schema.optional(documentedInteger(1, 1_000_000)(coded(10505)(Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), Schema.lessThanOrEqualTo(1_000_000)))))
}

/** The parameters every report takes: its window, its page and whose links it counts. */
const shared = {
  ...window,
  ...page,
  user_id: Schema.optional(coded(10506)(Schema.String.pipe(Schema.maxLength(20)))),
  label_id: text,
  keyword: text
}

const country = { country: Schema.optional(coded(10507)(Schema.String.pipe(Schema.pattern(/^[A-Za-z]{2}$/)))) }
const region = { ...country, region: text }
const city = { ...region, city: text }
const device = { device: Schema.optional(coded(10507)(Schema.Literal("desktop", "mobile", "tablet", "other"))) }
const referrer = { referrer: text }

const params = <F extends Schema.Struct.Fields>(fields: F) => Schema.Struct(fields).annotations({ parseOptions: { errors: "all" } })

export const SharedParams = params(shared)
export const CountryParams = params({ ...shared, ...country })
export const RegionParams = params({ ...shared, ...region })
export const CityParams = params({ ...shared, ...city })
export const DeviceParams = params({ ...shared, ...device })
export const ReferrerParams = params({ ...shared, ...referrer })
export const DomainReferrerParams = params({
  ...shared,
  ...referrer,
  link_id: Schema.optional(documentedInteger(1, Number.MAX_SAFE_INTEGER)(coded(10507)(Schema.NumberFromString.pipe(Schema.int(), Schema.positive()))))
})
export const WindowParams = params(window)
export const ClickedParams = params({
  ...window,
  ...page,
  from_user: Schema.optional(coded(10507)(Schema.Literal("me"))),
  keyword: text,
  tag: Schema.optional(Schema.String),
  group_id: Schema.optional(PathId(10160, 400))
})
export const PageParams = params(page)

type Get<Name extends string, Path, UrlParams, Success, Error, R> = HttpApiEndpoint.HttpApiEndpoint<
  Name,
  "GET",
  Path,
  UrlParams,
  never,
  never,
  Success,
  Error,
  R
>

/**
 * Every analytics endpoint checks the plan first, then the domain; every report is refused beyond the
 * account's concurrent reports (10901) and stopped at the time limit (10508).
 */
const guarded = <Name extends string, Path, UrlParams, Success, Error, R>(endpoint: Get<Name, Path, UrlParams, Success, Error, R>) =>
  endpoint
    .addError(answers(PlanWithoutAnalytics))
    .addError(answers(DomainNotFound))
    .addError(answers(ReportsBusy))
    .addError(answers(ReportTooSlow))

/** An endpoint over a window: `to_unix` needs `from_unix`, and comes after it by at most a year. */
const windowed = <Name extends string, Path, UrlParams, Success, Error, R>(endpoint: Get<Name, Path, UrlParams, Success, Error, R>) =>
  guarded(endpoint).addError(answers(WindowInvalid)).addError(answers(WindowEndWithoutStart))

/** A report with the filters on whose links it counts (`user_id`, `label_id`, `keyword`). */
const filtered = <Name extends string, Path, UrlParams, Success, Error, R>(endpoint: Get<Name, Path, UrlParams, Success, Error, R>) =>
  windowed(endpoint)
    .addError(answers(UserFilterInvalid))
    .addError(answers(UserFilterForbidden))
    .addError(answers(FilterValueInvalid))
    .addError(answersInvalidInput(10500, 10501, 10505, 10506, 10507))

const report = <N extends "daily" | "country" | "region" | "city" | "device" | "referrer", A, I>(name: N, row: Schema.Schema<A, I>) => ({
  domain: filtered(
    HttpApiEndpoint.get(`domain_${name}` as const, `/:domain_id/clicks/${name}`)
      .setPath(Schema.Struct({ domain_id: PathId(10101) }))
      .addSuccess(Report(row))
  ),
  link: filtered(
    HttpApiEndpoint.get(`link_${name}` as const, `/:domain_id/links/:link_id/clicks/${name}`)
      .setPath(Schema.Struct({ domain_id: PathId(10101), link_id: PathId(10150) }))
      .addSuccess(Report(row))
  ).addError(answers(LinkNotFound))
})

const daily = report("daily", DayRow)
const byCountry = report("country", CountryRow)
const byRegion = report("region", RegionRow)
const byCity = report("city", CityRow)
const byDevice = report("device", DeviceRow)
const byReferrer = report("referrer", ReferrerRow)

const describe = "over the window (default: the last 7 days and today), non-bot clicks only"

/**
 * E16-E30 and R1: click analytics, on the Team, Business and Enterprise plans. Every report but E23
 * answers one page of rows with `links` to the other pages and `meta`.
 */
export class AnalyticsApi extends HttpApiGroup.make("analytics")
  .annotate(OpenApi.Description, "Click analytics (E16-E30, R1), on the Team, Business and Enterprise plans")
  .add(
    windowed(HttpApiEndpoint.get("clicked")`/${domainId}/links/clicked`.setUrlParams(ClickedParams).addSuccess(Report(ClickedLink)))
      .addError(answers(GroupNotFound))
      .addError(answersInvalidInput(10160, 10500, 10501, 10505, 10507, 10153))
      .annotate(OpenApi.Summary, "E16 Clicked links of a domain").annotate(OpenApi.Description, `E16: the domain's links with clicks ${describe}, most clicked first`)
  )
  .add(daily.domain.setUrlParams(SharedParams).annotate(OpenApi.Summary, "E17 Domain clicks per day").annotate(OpenApi.Description, `E17: the domain's clicks per UTC day ${describe}`))
  .add(byCountry.domain.setUrlParams(CountryParams).annotate(OpenApi.Summary, "E18 Domain clicks per country").annotate(OpenApi.Description, `E18: clicks per country ${describe}`))
  .add(byRegion.domain.setUrlParams(RegionParams).annotate(OpenApi.Summary, "E19 Domain clicks per region").annotate(OpenApi.Description, `E19: clicks per region ${describe}`))
  .add(byCity.domain.setUrlParams(CityParams).annotate(OpenApi.Summary, "E20 Domain clicks per city").annotate(OpenApi.Description, `E20: clicks per city ${describe}`))
  .add(byDevice.domain.setUrlParams(DeviceParams).annotate(OpenApi.Summary, "E21 Domain clicks per device").annotate(OpenApi.Description, `E21: clicks per device ${describe}`))
  .add(
    byReferrer.domain
      .setUrlParams(DomainReferrerParams)
      .addError(answers(LinkNotFound))
      .annotate(OpenApi.Summary, "E22 Domain clicks per referrer").annotate(OpenApi.Description, `E22: clicks per referrer host ${describe}; link_id narrows it to one link`)
  )
  .add(
    windowed(HttpApiEndpoint.get("link_totals")`/${domainId}/links/${linkId}/clicks`.setUrlParams(WindowParams).addSuccess(LinkTotals))
      .addError(answers(LinkNotFound))
      .addError(answersInvalidInput(10500, 10501))
      .annotate(OpenApi.Summary, "E23 Link click totals").annotate(OpenApi.Description, "E23: the link's lifetime total, unique and scan_count, or the count of a window")
  )
  .add(
    windowed(
      HttpApiEndpoint.get("link_hourly")`/${domainId}/links/${linkId}/clicks/hourly`
        .setUrlParams(params({ ...window, ...page }))
        .addSuccess(Report(HourRow))
    )
      .addError(answers(LinkNotFound))
      .addError(answersInvalidInput(10500, 10501, 10505))
      .annotate(OpenApi.Summary, "E24 Link clicks per hour of the day").annotate(OpenApi.Description, `E24: the link's clicks per hour of the day (UTC), summed ${describe}`)
  )
  .add(daily.link.setUrlParams(SharedParams).annotate(OpenApi.Summary, "E25 Link clicks per day").annotate(OpenApi.Description, `E25: the link's clicks per UTC day ${describe}`))
  .add(byCountry.link.setUrlParams(CountryParams).annotate(OpenApi.Summary, "E26 Link clicks per country").annotate(OpenApi.Description, `E26: the link's clicks per country ${describe}`))
  .add(byRegion.link.setUrlParams(RegionParams).annotate(OpenApi.Summary, "E27 Link clicks per region").annotate(OpenApi.Description, `E27: the link's clicks per region ${describe}`))
  .add(byCity.link.setUrlParams(CityParams).annotate(OpenApi.Summary, "E28 Link clicks per city").annotate(OpenApi.Description, `E28: the link's clicks per city ${describe}`))
  .add(byDevice.link.setUrlParams(DeviceParams).annotate(OpenApi.Summary, "E29 Link clicks per device").annotate(OpenApi.Description, `E29: the link's clicks per device ${describe}`))
  .add(byReferrer.link.setUrlParams(ReferrerParams).annotate(OpenApi.Summary, "E30 Link clicks per referrer").annotate(OpenApi.Description, `E30: the link's clicks per referrer ${describe}`))
  .add(
    guarded(HttpApiEndpoint.get("raw_clicks")`/${domainId}/links/${linkId}/rawclicks`.setUrlParams(PageParams).addSuccess(Report(RawClick)))
      .addError(answers(LinkNotFound))
      .addError(answersInvalidInput(10505))
      .annotate(OpenApi.Summary, "R1 Raw clicks of a link").annotate(OpenApi.Description, "R1: the link's clicks as recorded, bots included and flagged, newest first")
  )
  .middleware(Authentication) {}
