import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Accounts } from "../src/Accounts/Accounts.ts"
import type { Caller, Plan, Role } from "../src/Accounts/User.ts"
import { Analytics } from "../src/Analytics/Analytics.ts"
import { ClickLog } from "../src/Clicks/ClickLog.ts"
import { clickRow, writeClickRows, writeClicks } from "./support/Clicks.ts"
import { newLink } from "./support/Fixtures.ts"
import { visit } from "./support/Redirects.ts"
import { analyticsScenario, D0, DAY, FOUR_DAYS, HOUR, report } from "./support/AnalyticsScenario.ts"
import { at, call, codes, stringAt, type TestUser } from "./support/Http.ts"
import { documentedCodes } from "./support/OpenApiShapes.ts"
import { TestServer } from "./support/TestServer.ts"

const objects = (reply: { body: unknown }) => at(reply.body, "objects")

const day = (offset: number, count: number, scans = 0) => ({
  date: new Date((D0 + offset * DAY) * 1000).toISOString().slice(0, 10),
  unix_date: D0 + offset * DAY,
  count,
  scan_count: scans
})

describe("domain reports (E17-E22)", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("E17: one row per UTC day, zero days included; the caller's own links unless user_id says otherwise", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const own = yield* report(s.admin, `/${s.domainId}/clicks/daily`, FOUR_DAYS)
        expect(own.status).toBe(200)
        expect(objects(own)).toEqual([day(0, 2), day(1, 2, 1), day(2, 1, 1), day(3, 1)])
        const all = yield* report(s.admin, `/${s.domainId}/clicks/daily`, { ...FOUR_DAYS, user_id: "all" })
        expect(objects(all)).toEqual([day(0, 3), day(1, 2, 1), day(2, 1, 1), day(3, 1)])
        const member = yield* report(s.admin, `/${s.domainId}/clicks/daily`, { ...FOUR_DAYS, user_id: s.member.userId })
        expect(objects(member)).toEqual([day(0, 1), day(1, 0), day(2, 0), day(3, 0)])
        const wider = yield* report(s.admin, `/${s.domainId}/clicks/daily`, { from_unix: D0 - 2 * DAY, to_unix: D0 + 5 * DAY, user_id: "all" })
        expect(objects(wider)).toEqual([day(-2, 0), day(-1, 0), day(0, 3), day(1, 2, 1), day(2, 1, 1), day(3, 1), day(4, 0)])
      })
    )

    it.effect("windows that do not start or end at midnight count to the second, to_unix exclusive", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const path = `/${s.domainId}/clicks/daily`
        const from1h = yield* report(s.admin, path, { from_unix: D0 + HOUR, to_unix: D0 + DAY + 5 * HOUR + 1 })
        expect(objects(from1h)).toEqual([day(0, 2), day(1, 2, 1)])
        const after1h = yield* report(s.admin, path, { from_unix: D0 + HOUR + 1, to_unix: D0 + DAY + 5 * HOUR })
        expect(objects(after1h)).toEqual([day(0, 1), day(1, 1)])
        const inside = yield* report(s.admin, path, { from_unix: D0 + 90 * 60, to_unix: D0 + 3 * HOUR, user_id: "all" })
        expect(objects(inside)).toEqual([day(0, 2)])
        const byKeyword = yield* report(s.admin, path, { from_unix: D0 + HOUR + 1, to_unix: D0 + 3 * DAY, keyword: "ALPHA" })
        expect(objects(byKeyword)).toEqual([day(0, 1), day(1, 1, 1), day(2, 0)])
        const empty = yield* report(s.admin, path, { from_unix: D0 + HOUR, to_unix: D0 + HOUR })
        expect(objects(empty)).toEqual([])
        // Edges near a day's end or start are the whole day minus the clicks outside the window.
        const nearEnds = yield* report(s.admin, path, { from_unix: D0 + HOUR + 1, to_unix: D0 + 3 * DAY + 22 * HOUR })
        expect(objects(nearEnds)).toEqual([day(0, 1), day(1, 2, 1), day(2, 1, 1), day(3, 0)])
        const mostOfDay = (end: number) => report(s.admin, path, { from_unix: D0 + 3 * DAY + HOUR / 2, to_unix: D0 + 3 * DAY + end })
        expect(objects(yield* mostOfDay(23 * HOUR - 1))).toEqual([day(3, 0)])
        expect(objects(yield* mostOfDay(23 * HOUR + 1))).toEqual([day(3, 1)])
      })
    )

    it.effect("a window to now counts the day so far and no click stamped after now", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const now = Math.floor(Date.now() / 1000)
        yield* writeClicks([
          { linkId: s.a, domainId: s.domainId, at: now - 60, country: "AA" },
          { linkId: s.a, domainId: s.domainId, at: now + 600, country: "BB" },
          { linkId: s.b, domainId: s.domainId, at: now - 2 * DAY + 60, country: "CC" },
          { linkId: s.b, domainId: s.domainId, at: now - 2 * DAY - 60, country: "DD" },
          { linkId: s.c, domainId: s.domainId, at: now + 600, country: "BB" }
        ])
        const window = { from_unix: now - 2 * DAY, to_unix: now, user_id: "all" }
        const daily = objects(yield* report(s.admin, `/${s.domainId}/clicks/daily`, window)) as ReadonlyArray<{ count: number }>
        expect(daily.reduce((sum, row) => sum + row.count, 0)).toBe(2)
        expect(objects(yield* report(s.admin, `/${s.domainId}/clicks/country`, window))).toEqual([
          { country: "AA", count: 1 },
          { country: "CC", count: 1 }
        ])
        const clicked = objects(yield* report(s.admin, `/${s.domainId}/links/clicked`, window)) as ReadonlyArray<{ id: number }>
        expect(clicked.map((link) => link.id)).toEqual([s.a, s.b])
        expect(objects(yield* report(s.admin, `/${s.domainId}/links/${s.a}/clicks/country`, window))).toEqual([
          { country: "AA", count: 1 }
        ])
      })
    )

    it.effect("windows over whole months read monthly rows, with the days and partial days around them exact", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const t = (iso: string) => Date.parse(iso) / 1000
        const click = (at: string, country: string, linkId = s.a) => ({ linkId, domainId: s.domainId, at: t(at), country })
        yield* writeClicks([
          click("2024-12-31T23:59:59Z", "XX"),
          click("2025-01-14T11:00:00Z", "XX"),
          click("2025-01-14T12:00:00Z", "AA"),
          click("2025-01-15T08:00:00Z", "AA"),
          click("2025-01-31T23:59:59Z", "BB"),
          click("2025-02-01T00:00:00Z", "BB"),
          click("2025-02-10T10:00:00Z", "CC"),
          click("2025-02-20T10:00:00Z", "CC", s.c),
          { ...click("2025-03-05T10:00:00Z", "CC"), device: "mobile" },
          click("2025-04-02T10:00:00Z", "DD"),
          click("2025-04-03T05:59:59Z", "DD"),
          click("2025-04-03T06:00:00Z", "XX")
        ])
        // Jan 14 12:00 to Apr 3 06:00: partial days at both ends, days of January and April, February
        // and March whole (the scenario's own clicks of 10-13 March included).
        const window = { from_unix: t("2025-01-14T12:00:00Z"), to_unix: t("2025-04-03T06:00:00Z") }
        expect(objects(yield* report(s.admin, `/${s.domainId}/clicks/country`, { ...window, user_id: "all" }))).toEqual([
          { country: "US", count: 4 },
          { country: "CC", count: 3 },
          { country: "AA", count: 2 },
          { country: "BB", count: 2 },
          { country: "DD", count: 2 },
          { country: "DE", count: 1 },
          { country: "FR", count: 1 },
          { country: null, count: 1 }
        ])
        expect(objects(yield* report(s.admin, `/${s.domainId}/clicks/country`, { ...window, country: "cc" }))).toEqual([
          { country: "CC", count: 2 }
        ])
        const devices = objects(yield* report(s.admin, `/${s.domainId}/clicks/device`, { ...window, user_id: "all" }))
        expect(devices).toEqual([
          { device: "desktop", count: 11 },
          { device: "mobile", count: 3 },
          { device: "other", count: 1 },
          { device: "tablet", count: 1 }
        ])
        // A window of exactly two whole months.
        const months = { from_unix: t("2025-02-01T00:00:00Z"), to_unix: t("2025-04-01T00:00:00Z") }
        expect(objects(yield* report(s.admin, `/${s.domainId}/clicks/referrer`, { ...months, user_id: "all" }))).toEqual([
          { referrer: "direct", count: 7 },
          { referrer: "google.com", count: 3 },
          { referrer: "t.co", count: 1 }
        ])
        // E16 sums whole months per link too: February alone, then the mixed window.
        const clicked = (window: { from_unix: number; to_unix: number }) =>
          Effect.map(report(s.admin, `/${s.domainId}/links/clicked`, window), (reply) =>
            (objects(reply) as ReadonlyArray<{ id: number }>).map((link) => link.id)
          )
        expect(yield* clicked({ from_unix: t("2025-02-01T00:00:00Z"), to_unix: t("2025-03-01T00:00:00Z") })).toEqual([s.a, s.c])
        expect(yield* clicked(window)).toEqual([s.a, ...[s.b, s.c].sort((x, y) => x - y)])
        expect(yield* clicked({ from_unix: t("2025-01-31T23:59:59Z"), to_unix: t("2025-03-05T10:00:00Z") })).toEqual([s.a, s.c])
      })
    )

    it.effect("E18-E20: geography sorted by clicks, then names, unknown last; country, region and city filters", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const q = { ...FOUR_DAYS, user_id: "all" }
        const countries = yield* report(s.admin, `/${s.domainId}/clicks/country`, q)
        expect(objects(countries)).toEqual([
          { country: "US", count: 4 },
          { country: "DE", count: 1 },
          { country: "FR", count: 1 },
          { country: null, count: 1 }
        ])
        expect(objects(yield* report(s.admin, `/${s.domainId}/clicks/country`, { ...q, country: "us" }))).toEqual([{ country: "US", count: 4 }])
        const regions = yield* report(s.admin, `/${s.domainId}/clicks/region`, q)
        expect(objects(regions)).toEqual([
          { country: "US", region: "California", count: 3 },
          { country: "DE", region: "Berlin", count: 1 },
          { country: "FR", region: "Île-de-France", count: 1 },
          { country: "US", region: "New York", count: 1 },
          { country: null, region: null, count: 1 }
        ])
        const usRegions = yield* report(s.admin, `/${s.domainId}/clicks/region`, { ...q, country: "US", region: "new york" })
        expect(objects(usRegions)).toEqual([{ country: "US", region: "New York", count: 1 }])
        const cities = yield* report(s.admin, `/${s.domainId}/clicks/city`, q)
        expect(objects(cities)).toEqual([
          { country: "US", region: "California", city: "Mountain View", count: 2 },
          { country: "DE", region: "Berlin", city: "Berlin", count: 1 },
          { country: "FR", region: "Île-de-France", city: "Paris", count: 1 },
          { country: "US", region: "California", city: "San Jose", count: 1 },
          { country: "US", region: "New York", city: "New York", count: 1 },
          { country: null, region: null, city: null, count: 1 }
        ])
        const mv = yield* report(s.admin, `/${s.domainId}/clicks/city`, { ...q, city: "mountain view" })
        expect(objects(mv)).toEqual([{ country: "US", region: "California", city: "Mountain View", count: 2 }])
      })
    )

    it.effect("E21 by device and E22 by referrer (bots never counted); E22 narrowed to one link by link_id", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const q = { ...FOUR_DAYS, user_id: "all" }
        expect(objects(yield* report(s.admin, `/${s.domainId}/clicks/device`, q))).toEqual([
          { device: "desktop", count: 3 },
          { device: "mobile", count: 2 },
          { device: "other", count: 1 },
          { device: "tablet", count: 1 }
        ])
        expect(objects(yield* report(s.admin, `/${s.domainId}/clicks/device`, { ...q, device: "mobile" }))).toEqual([
          { device: "mobile", count: 2 }
        ])
        expect(objects(yield* report(s.admin, `/${s.domainId}/clicks/referrer`, q))).toEqual([
          { referrer: "direct", count: 3 },
          { referrer: "google.com", count: 3 },
          { referrer: "t.co", count: 1 }
        ])
        expect(objects(yield* report(s.admin, `/${s.domainId}/clicks/referrer`, { ...q, link_id: s.a }))).toEqual([
          { referrer: "google.com", count: 2 },
          { referrer: "direct", count: 1 },
          { referrer: "t.co", count: 1 }
        ])
        expect(objects(yield* report(s.admin, `/${s.domainId}/clicks/referrer`, { ...q, referrer: "GOOGLE.com" }))).toEqual([
          { referrer: "google.com", count: 3 }
        ])
      })
    )
  })
})

describe("clicked links (E16) and link reports (E23-E30, R1)", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("E16: links with clicks in the window, most clicked first, with lifetime_count and last_clicked", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const path = `/${s.domainId}/links/clicked`
        const all = yield* report(s.admin, path, FOUR_DAYS)
        expect(all.status).toBe(200)
        const listed = objects(all) as ReadonlyArray<Record<string, unknown>>
        expect(listed.map((link) => [link.id, link.lifetime_count, link.last_clicked])).toEqual([
          [s.a, 4, "2025-03-13 23:00:00"],
          [s.b, 2, "2025-03-12 12:00:00"],
          [s.c, 1, "2025-03-10 02:00:00"]
        ])
        expect(listed[0]).not.toHaveProperty("notify_on_click")
        expect(listed[0]).toMatchObject({ alias: "alpha", url: "https://example.com/a", click_count: 4, tags: [{ name: "promo", shared: true }] })
        const mine = yield* report(s.admin, path, { ...FOUR_DAYS, from_user: "me" })
        expect((objects(mine) as ReadonlyArray<{ id: number }>).map((link) => link.id)).toEqual([s.a, s.b])
        const memberSees = yield* report(s.member, path, FOUR_DAYS)
        expect((objects(memberSees) as ReadonlyArray<{ id: number }>).map((link) => link.id)).toEqual([s.c])
        const lastDay = yield* report(s.admin, path, { from_unix: D0 + 2 * DAY, to_unix: D0 + 4 * DAY })
        expect((objects(lastDay) as ReadonlyArray<{ id: number }>).map((link) => link.id)).toEqual([s.a, s.b])
        const tagged = yield* report(s.admin, path, { ...FOUR_DAYS, tag: "PROMO" })
        expect((objects(tagged) as ReadonlyArray<{ id: number }>).map((link) => link.id)).toEqual([s.a])
        const keyword = yield* report(s.admin, path, { ...FOUR_DAYS, keyword: "spring" })
        expect((objects(keyword) as ReadonlyArray<{ id: number }>).map((link) => link.id)).toEqual([s.b])
        expect(codes(yield* report(s.admin, path, { from_user: "all" }))).toEqual([10507])
      })
    )

    it.effect("E23: lifetime total, unique addresses and QR scans without a window, the window's count with one, at the top level", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const lifetime = yield* report(s.admin, `/${s.domainId}/links/${s.a}/clicks`)
        expect(lifetime.body).toEqual({ total: 4, unique: 3, scan_count: 1 })
        const b = yield* report(s.admin, `/${s.domainId}/links/${s.b}/clicks`)
        expect(b.body).toEqual({ total: 2, unique: 1, scan_count: 1 })
        const firstDay = yield* report(s.admin, `/${s.domainId}/links/${s.a}/clicks`, { from_unix: D0, to_unix: D0 + DAY })
        expect(firstDay.body).toEqual({ count: 2 })
        const fromOnly = yield* report(s.admin, `/${s.domainId}/links/${s.a}/clicks`, { from_unix: D0 + 2 * HOUR })
        expect(fromOnly.body).toEqual({ count: 3 })
        const toOnly = yield* report(s.admin, `/${s.domainId}/links/${s.a}/clicks`, { to_unix: D0 + DAY })
        expect([toOnly.status, codes(toOnly)]).toEqual([400, [10503]])
      })
    )

    it.effect("E24: 24 rows, clicks and QR scans per UTC hour of the day summed over the window's days", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const hourly = yield* report(s.admin, `/${s.domainId}/links/${s.a}/clicks/hourly`, FOUR_DAYS)
        const counts = new Map([[1, 1], [2, 1], [5, 1], [23, 1]])
        expect(objects(hourly)).toEqual(
          Array.from({ length: 24 }, (_, hour) => ({ hour, count: counts.get(hour) ?? 0, scan_count: hour === 5 ? 1 : 0 }))
        )
        const b = yield* report(s.admin, `/${s.domainId}/links/${s.b}/clicks/hourly`, { from_unix: D0 + DAY + 2 * HOUR, to_unix: D0 + 3 * DAY })
        expect((objects(b) as ReadonlyArray<{ count: number }>).map((row) => row.count)).toEqual(
          Array.from({ length: 24 }, (_, hour) => (hour === 12 ? 1 : 0))
        )
      })
    )

    it.effect("E25-E30: the link's clicks by day, country, region, city, device and referrer, with filters", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const base = `/${s.domainId}/links/${s.a}/clicks`
        expect(objects(yield* report(s.admin, `${base}/daily`, FOUR_DAYS))).toEqual([day(0, 2), day(1, 1, 1), day(2, 0), day(3, 1)])
        expect(objects(yield* report(s.admin, `${base}/country`, FOUR_DAYS))).toEqual([
          { country: "US", count: 2 },
          { country: "DE", count: 1 },
          { country: null, count: 1 }
        ])
        expect(objects(yield* report(s.admin, `${base}/region`, { ...FOUR_DAYS, country: "de" }))).toEqual([
          { country: "DE", region: "Berlin", count: 1 }
        ])
        expect(objects(yield* report(s.admin, `${base}/city`, { ...FOUR_DAYS, region: "california" }))).toEqual([
          { country: "US", region: "California", city: "Mountain View", count: 1 },
          { country: "US", region: "California", city: "San Jose", count: 1 }
        ])
        expect(objects(yield* report(s.admin, `${base}/device`, FOUR_DAYS))).toEqual([
          { device: "mobile", count: 2 },
          { device: "desktop", count: 1 },
          { device: "tablet", count: 1 }
        ])
        expect(objects(yield* report(s.admin, `${base}/referrer`, FOUR_DAYS))).toEqual([
          { referrer: "google.com", count: 2 },
          { referrer: "direct", count: 1 },
          { referrer: "t.co", count: 1 }
        ])
        // The shared filters apply to the link itself.
        expect(objects(yield* report(s.admin, `${base}/device`, { ...FOUR_DAYS, keyword: "spring" }))).toEqual([])
        expect(objects(yield* report(s.admin, `${base}/device`, { ...FOUR_DAYS, label_id: s.promoTagId, device: "tablet" }))).toEqual([
          { device: "tablet", count: 1 }
        ])
        expect(objects(yield* report(s.admin, `${base}/daily`, { ...FOUR_DAYS, user_id: s.member.userId }))).toEqual([
          day(0, 0),
          day(1, 0),
          day(2, 0),
          day(3, 0)
        ])
      })
    )

    it.effect("R1: the link's clicks newest first, bots flagged, no address", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const raw = yield* report(s.admin, `/${s.domainId}/links/${s.a}/rawclicks`)
        expect(raw.status).toBe(200)
        const rows = objects(raw) as ReadonlyArray<Record<string, unknown>>
        expect(rows.map((row) => [row.created, row.device, row.bot, row.qr])).toEqual([
          [D0 + 3 * DAY + 23 * HOUR, "tablet", false, false],
          [D0 + DAY + 6 * HOUR, "bot", true, false],
          [D0 + DAY + 5 * HOUR, "mobile", false, true],
          [D0 + 2 * HOUR, "mobile", false, false],
          [D0 + HOUR, "desktop", false, false]
        ])
        expect(rows[4]).toEqual({
          engagement_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          created: D0 + HOUR,
          country: "US",
          region: "California",
          city: "Mountain View",
          device: "desktop",
          referrer: "google.com",
          user_agent: "test",
          qr: false,
          bot: false
        })
        expect(at(raw.body, "meta", "total")).toBe(5)
      })
    )
  })
})

describe("analytics rules: windows, parameters, plans, privileges, pages", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("window rules: to_unix alone 10503, backwards or over a year 10502, from_unix alone a year, bad numbers 10500/10501", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const path = `/${s.domainId}/clicks/daily`
        expect(codes(yield* report(s.admin, path, { to_unix: D0 }))).toEqual([10503])
        expect(codes(yield* report(s.admin, path, { from_unix: D0, to_unix: D0 - 1 }))).toEqual([10502])
        // 2025-03-10 + one calendar year is 2026-03-10: 365 days.
        expect((yield* report(s.admin, path, { from_unix: D0, to_unix: D0 + 365 * DAY })).status).toBe(200)
        expect(codes(yield* report(s.admin, path, { from_unix: D0, to_unix: D0 + 365 * DAY + 1 }))).toEqual([10502])
        const year = yield* report(s.admin, path, { from_unix: D0, user_id: "all" })
        expect(at(year.body, "meta", "total")).toBe(365)
        expect(at(year.body, "meta", "last_page")).toBe(8)
        const lastPage = yield* report(s.admin, path, { from_unix: D0, page: 8 })
        expect((objects(lastPage) as ReadonlyArray<unknown>).length).toBe(15)
        expect(at(objects(lastPage), 14, "date")).toBe("2026-03-09")
        // A year from 29 February 2024 ends on 1 March 2025: 366 days.
        const leap = yield* report(s.admin, path, { from_unix: Date.UTC(2024, 1, 29) / 1000 })
        expect(at(leap.body, "meta", "total")).toBe(366)
        expect(codes(yield* report(s.admin, path, { from_unix: "yesterday" }))).toEqual([10500])
        expect(codes(yield* report(s.admin, path, { from_unix: D0, to_unix: "-1" }))).toEqual([10501])
        expect(codes(yield* report(s.admin, path, { from_unix: "1.5", to_unix: "x" }))).toEqual([10500, 10501])
        expect((yield* report(s.admin, path, { from_unix: "1.5" })).status).toBe(400)
      })
    )

    it.effect("extreme windows on every windowed report of both versions: 200 or 400 10502, never a 500", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const lastSecond = 253_402_300_799
        const lastDay = lastSecond + 1 - DAY
        const kinds = ["daily", "country", "region", "city", "device", "referrer"]
        const paths = [
          `/${s.domainId}/links/clicked`,
          ...kinds.map((kind) => `/${s.domainId}/clicks/${kind}`),
          `/${s.domainId}/links/${s.a}/clicks`,
          `/${s.domainId}/links/${s.a}/clicks/hourly`,
          ...kinds.map((kind) => `/${s.domainId}/links/${s.a}/clicks/${kind}`)
        ]
        const windows: ReadonlyArray<[Record<string, number>, number]> = [
          [{ from_unix: lastDay }, 400],
          [{ from_unix: lastSecond }, 400],
          [{ from_unix: lastSecond + 2 - 365 * DAY }, 400],
          [{ from_unix: lastSecond + 1 - 365 * DAY }, 200],
          [{ from_unix: lastDay, to_unix: lastSecond }, 200],
          [{ from_unix: lastSecond, to_unix: lastSecond }, 200],
          [{ from_unix: 0 }, 200],
          [{ from_unix: 0, to_unix: 0 }, 200]
        ]
        for (const version of ["v4", "v3"]) {
          for (const path of paths) {
            for (const [window, status] of windows) {
              const search = new URLSearchParams(Object.entries(window).map(([key, value]): [string, string] => [key, String(value)]))
              const reply = yield* call("GET", `/api/${version}${path}?${search}`, { token: s.admin.token })
              expect({ version, path, window, status: reply.status }).toEqual({ version, path, window, status })
              if (status === 400) expect(codes(reply)).toEqual([10502])
            }
          }
        }
      })
    )

    it.effect("the default window is the start of the UTC day a week ago to the end of today: 8 rows", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const now = Math.floor(Date.now() / 1000)
        const today = Math.floor(now / DAY) * DAY
        yield* writeClicks([
          { linkId: s.a, domainId: s.domainId, at: now - 60 },
          { linkId: s.a, domainId: s.domainId, at: today - 7 * DAY },
          { linkId: s.a, domainId: s.domainId, at: today - 7 * DAY - 1 }
        ])
        const rows = objects(yield* report(s.admin, `/${s.domainId}/clicks/daily`)) as ReadonlyArray<{ unix_date: number; count: number }>
        expect(rows.map((row) => row.unix_date)).toEqual(Array.from({ length: 8 }, (_, n) => today - (7 - n) * DAY))
        expect(rows.map((row) => row.count)).toEqual([1, 0, 0, 0, 0, 0, 0, 1])
      })
    )

    it.effect("bad parameters: page 10505, user_id 10506, label_id, device and country 10507 naming the parameter", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const d = `/${s.domainId}/clicks`
        expect(codes(yield* report(s.admin, `${d}/daily`, { page: 0 }))).toEqual([10505])
        expect(codes(yield* report(s.admin, `${d}/daily`, { page: "two" }))).toEqual([10505])
        expect(codes(yield* report(s.admin, `${d}/daily`, { user_id: "someone" }))).toEqual([10506])
        expect(codes(yield* report(s.admin, `${d}/daily`, { user_id: 99_999_999 }))).toEqual([10506])
        const label = yield* report(s.admin, `${d}/daily`, { label_id: "promo" })
        expect(label.body).toEqual({ errors: [{ code: 10507, message: "label_id is invalid" }] })
        expect(codes(yield* report(s.admin, `${d}/daily`, { label_id: 99_999_999 }))).toEqual([10507])
        const device = yield* report(s.admin, `${d}/device`, { device: "bot" })
        expect(device.body).toEqual({ errors: [{ code: 10507, message: "device is invalid" }] })
        expect(codes(yield* report(s.admin, `${d}/country`, { country: "USA" }))).toEqual([10507])
        expect(codes(yield* report(s.admin, `${d}/daily`, { keyword: "k".repeat(201) }))).toEqual([10507])
        expect(codes(yield* report(s.admin, `${d}/referrer`, { link_id: "x" }))).toEqual([10507])
        expect(codes(yield* report(s.admin, `${d}/referrer`, { link_id: 99_999_999 }))).toEqual([10150])
      })
    )

    it.effect("plans without analytics get 403 10504 on every report", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario("free")
        for (const path of [
          `/${s.domainId}/links/clicked`,
          `/${s.domainId}/clicks/daily`,
          `/${s.domainId}/clicks/referrer`,
          `/${s.domainId}/links/${s.a}/clicks`,
          `/${s.domainId}/links/${s.a}/clicks/hourly`,
          `/${s.domainId}/links/${s.a}/clicks/city`,
          `/${s.domainId}/links/${s.a}/rawclicks`
        ]) {
          const reply = yield* report(s.admin, path)
          expect([path, reply.status, codes(reply)]).toEqual([path, 403, [10504]])
        }
      })
    )

    it.effect("members see their own clicks only; other users and all need to administer the domain; other accounts' ids are unknown", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const d = `/${s.domainId}/clicks/daily`
        const own = yield* report(s.member, d, FOUR_DAYS)
        expect(objects(own)).toEqual([day(0, 1), day(1, 0), day(2, 0), day(3, 0)])
        expect(codes(yield* report(s.member, d, { user_id: "all" }))).toEqual([10003])
        expect((yield* report(s.member, d, { user_id: "all" })).status).toBe(403)
        expect(codes(yield* report(s.member, d, { user_id: s.admin.userId }))).toEqual([10003])
        expect((yield* report(s.member, d, { user_id: s.member.userId })).status).toBe(200)
        expect(codes(yield* report(s.member, `/${s.domainId}/links/${s.a}/clicks/daily`))).toEqual([10150])
        expect(codes(yield* report(s.member, `/${s.domainId}/links/${s.a}/rawclicks`))).toEqual([10150])
        const stranger = yield* analyticsScenario()
        expect(codes(yield* report(stranger.admin, d))).toEqual([10101])
        expect((yield* report(stranger.admin, d)).status).toBe(404)
        expect(codes(yield* report(stranger.admin, `/${stranger.domainId}/links/${s.a}/clicks`))).toEqual([10150])
        expect(codes(yield* report(s.admin, d, { user_id: stranger.admin.userId }))).toEqual([10506])
        expect(codes(yield* report(s.admin, d, { label_id: stranger.promoTagId }))).toEqual([10507])
      })
    )

    it.effect("pages of 50 with meta and links as full URLs of the same request", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const reply = yield* report(s.admin, `/${s.domainId}/clicks/daily`, { from_unix: D0, to_unix: D0 + 120 * DAY, page: 2 })
        expect((objects(reply) as ReadonlyArray<unknown>).length).toBe(50)
        expect(at(objects(reply), 0, "unix_date")).toBe(D0 + 50 * DAY)
        expect(at(reply.body, "meta")).toEqual({
          current_page: 2,
          previous_page: 1,
          next_page: 3,
          last_page: 3,
          from: 51,
          to: 100,
          per_page: 50,
          total: 120,
          path: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/api/v4/${s.domainId}/clicks/daily$`))
        })
        const links = at(reply.body, "links") as Record<string, string | null>
        const query = `from_unix=${D0}&to_unix=${D0 + 120 * DAY}`
        expect(links.first).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/api/v4/${s.domainId}/clicks/daily\\?${query}&page=1$`))
        expect(links.last).toMatch(new RegExp(`\\?${query}&page=3$`))
        expect(links.previous).toMatch(new RegExp(`\\?${query}&page=1$`))
        expect(links.next).toMatch(new RegExp(`\\?${query}&page=3$`))
        const first = yield* report(s.admin, `/${s.domainId}/clicks/country`, FOUR_DAYS)
        expect(at(first.body, "links", "previous")).toBeNull()
        expect(at(first.body, "links", "next")).toBeNull()
        expect(at(first.body, "meta", "total")).toBe(3)
        const beyond = yield* report(s.admin, `/${s.domainId}/clicks/country`, { ...FOUR_DAYS, page: 5 })
        expect(objects(beyond)).toEqual([])
        expect(at(beyond.body, "meta", "total")).toBe(3)
        const clickedBeyond = yield* report(s.admin, `/${s.domainId}/links/clicked`, { ...FOUR_DAYS, page: 2 })
        expect(at(clickedBeyond.body, "meta", "total")).toBe(3)
      })
    )

    it.effect("the OpenAPI document lists, per operation, the codes each status can carry", () =>
      Effect.gen(function* () {
        const document = (yield* call("GET", "/api/v4/openapi.json")).body
        const daily = "/api/v4/{domain_id}/clicks/daily"
        expect(documentedCodes(document, daily, "get", "400")).toEqual(
          expect.arrayContaining([10500, 10501, 10502, 10503, 10505, 10506, 10507])
        )
        expect(documentedCodes(document, daily, "get", "403")).toEqual(expect.arrayContaining([10003, 10504]))
        expect(documentedCodes(document, daily, "get", "404")).toContain(10101)
        const totals = "/api/v4/{domain_id}/links/{link_id}/clicks"
        expect(documentedCodes(document, totals, "get", "400")).toEqual(expect.arrayContaining([10500, 10501, 10502, 10503]))
        expect(documentedCodes(document, totals, "get", "403")).toContain(10504)
        expect(documentedCodes(document, totals, "get", "404")).toEqual(expect.arrayContaining([10101, 10150]))
      })
    )

    it.effect("the Analytics service is usable without HTTP: failures are tagged, with their code and message", () =>
      Effect.gen(function* () {
        const analytics = yield* Analytics
        const s = yield* analyticsScenario()
        const callerOf = (user: TestUser, role: Role, plan: Plan = "team"): Caller => ({
          userId: user.userId,
          accountId: user.accountId,
          email: user.email,
          nickname: "someone",
          role,
          plan,
          linkQuota: null
        })
        const admin = callerOf(s.admin, "account_admin")
        const page = { page: 1, perPage: 50 }
        const days = yield* analytics.domain.daily(admin, s.domainId, { ...FOUR_DAYS, user_id: "all" }, page)
        expect(days).toEqual({ rows: [day(0, 3), day(1, 2, 1), day(2, 1, 1), day(3, 1)], total: 4 })
        expect(yield* analytics.linkTotals(admin, s.domainId, s.a, {})).toEqual({ total: 4, unique: 3, scan_count: 1 })
        const free = yield* Effect.flip(analytics.domain.daily(callerOf(s.admin, "account_admin", "free"), s.domainId, {}, page))
        expect(free).toMatchObject({
          _tag: "PlanWithoutAnalytics",
          code: 10504,
          message: "analytics need the Team, Business or Enterprise plan"
        })
        const window = yield* analytics.domain.country(admin, s.domainId, { to_unix: D0 }, page).pipe(
          Effect.as("answered"),
          Effect.catchTag("WindowEndWithoutStart", (failure) => Effect.succeed(failure.code))
        )
        expect(window).toBe(10503)
        const member = callerOf(s.member, "member")
        const others = yield* Effect.flip(analytics.domain.daily(member, s.domainId, { user_id: "all" }, page))
        expect(others).toMatchObject({ _tag: "UserFilterForbidden", code: 10003 })
        const label = yield* Effect.flip(analytics.link.daily(admin, s.domainId, s.a, { label_id: "x" }, page))
        expect(label).toMatchObject({ _tag: "FilterValueInvalid", code: 10507, message: "label_id is invalid" })
        const hidden = yield* Effect.flip(analytics.rawClicks(member, s.domainId, s.a, page))
        expect(hidden).toMatchObject({ _tag: "LinkNotFound", code: 10150 })
      })
    )
  })
})

describe("analytics data: the live click pipeline, retries, deleted links, domain admins", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("a redirect reaches every report once its batch is written; a bot's does not", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const name = stringAt((yield* report(s.admin, `/domains/${s.domainId}`)).body, "objects", 0, "domain")
        const fresh = yield* newLink(s.admin, s.domainId, { alias: "live" })
        const browser = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
        expect((yield* visit(name, "/live?qr=1", { headers: { "user-agent": browser, referer: "https://news.example/a" } })).status).toBe(301)
        expect((yield* visit(name, "/live", { headers: { "user-agent": "curl/8.0" } })).status).toBe(301)
        yield* (yield* ClickLog).flush
        expect((yield* report(s.admin, `/${s.domainId}/links/${fresh}/clicks`)).body).toEqual({ total: 1, unique: 1, scan_count: 1 })
        const today = yield* report(s.admin, `/${s.domainId}/links/${fresh}/clicks/daily`)
        expect(at(objects(today), 7)).toMatchObject({ count: 1, scan_count: 1 })
        expect(objects(yield* report(s.admin, `/${s.domainId}/links/${fresh}/clicks/referrer`))).toEqual([{ referrer: "news.example", count: 1 }])
        expect(objects(yield* report(s.admin, `/${s.domainId}/links/${fresh}/clicks/device`))).toEqual([{ device: "desktop", count: 1 }])
        expect(at((yield* report(s.admin, `/${s.domainId}/links/${fresh}/rawclicks`)).body, "meta", "total")).toBe(2)
      })
    )

    it.effect("a batch written twice counts once everywhere", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const rows = [
          clickRow({ linkId: s.c, domainId: s.domainId, at: D0 + 3 * DAY, ip: "7", country: "IT", device: "mobile" }),
          clickRow({ linkId: s.c, domainId: s.domainId, at: D0 + 3 * DAY + 1, ip: "8", country: "IT", device: "mobile" })
        ]
        yield* writeClickRows(rows)
        yield* writeClickRows(rows)
        yield* writeClickRows([rows[0]!])
        expect((yield* report(s.admin, `/${s.domainId}/links/${s.c}/clicks`)).body).toEqual({ total: 3, unique: 3, scan_count: 0 })
        expect(objects(yield* report(s.member, `/${s.domainId}/clicks/country`, FOUR_DAYS))).toEqual([
          { country: "IT", count: 2 },
          { country: "FR", count: 1 }
        ])
      })
    )

    it.effect("a deleted link's clicks stay in the domain's reports but leave E16 and its own reports", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE links SET status = 'deleted' WHERE id = ${s.b}`
        const q = { ...FOUR_DAYS, user_id: "all" }
        expect(objects(yield* report(s.admin, `/${s.domainId}/clicks/daily`, q))).toEqual([day(0, 3), day(1, 2, 1), day(2, 1, 1), day(3, 1)])
        const clicked = objects(yield* report(s.admin, `/${s.domainId}/links/clicked`, FOUR_DAYS)) as ReadonlyArray<{ id: number }>
        expect(clicked.map((link) => link.id)).toEqual([s.a, s.c])
        expect(codes(yield* report(s.admin, `/${s.domainId}/links/${s.b}/clicks`))).toEqual([10150])
        expect(codes(yield* report(s.admin, `/${s.domainId}/links/${s.b}/rawclicks`))).toEqual([10150])
      })
    )

    it.effect("a domain admin may ask for all users and for another user of the account", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        yield* (yield* Accounts).makeDomainAdmin(s.member.userId, s.domainId).pipe(Effect.orDie)
        const all = yield* report(s.member, `/${s.domainId}/clicks/daily`, { ...FOUR_DAYS, user_id: "all" })
        expect(objects(all)).toEqual([day(0, 3), day(1, 2, 1), day(2, 1, 1), day(3, 1)])
        const admins = yield* report(s.member, `/${s.domainId}/clicks/device`, { ...FOUR_DAYS, user_id: s.admin.userId })
        expect(objects(admins)).toEqual([
          { device: "desktop", count: 3 },
          { device: "mobile", count: 2 },
          { device: "tablet", count: 1 }
        ])
        const linkReport = yield* report(s.member, `/${s.domainId}/links/${s.a}/clicks/daily`, FOUR_DAYS)
        expect(objects(linkReport)).toEqual([day(0, 2), day(1, 1, 1), day(2, 0), day(3, 1)])
      })
    )
  })
})
