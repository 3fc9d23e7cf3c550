import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ClickBatch } from "../src/Clicks/ClickBatch.ts"
import { ClickRepo } from "../src/Clicks/ClickRepo.ts"
import { HourlyRollupPruner } from "../src/Clicks/HourlyRollupPruner.ts"
import { SqlClient } from "@effect/sql"
import { clickRow, type TestClick, writeClicks } from "./support/Clicks.ts"
import { newDomain, newLink } from "./support/Fixtures.ts"
import { DAY, HOUR, report } from "./support/AnalyticsScenario.ts"
import { at, newUser } from "./support/Http.ts"
import { TestServer } from "./support/TestServer.ts"
import { seededRandom } from "../bench/support/Random.ts"


const COUNTRIES = ["US", "DE", "FR", null] as const
const DEVICES = ["desktop", "mobile", "tablet", "other"] as const
const REFERRERS = ["direct", "google.com", "t.co"] as const

const rowsOf = (reply: { body: unknown }) => at(reply.body, "objects") as ReadonlyArray<Record<string, unknown>>

/** Counts per key, as a plain object with sorted keys, zero counts left out. */
const tally = (items: ReadonlyArray<string>) => {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1)
  return Object.fromEntries([...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

const reported = (rows: ReadonlyArray<Record<string, unknown>>, key: string) =>
  Object.fromEntries(
    rows
      .filter((row) => typeof row.count === "number" && row.count > 0)
      .map((row): [string, unknown] => [String(row[key] ?? "unknown"), row.count])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  )

/** Midnight UTC four days ago: the clicks' three days end before today, inside the hourly rollups' days. */
const D0 = Math.floor(Date.now() / 1000 / DAY) * DAY - 4 * DAY

describe("report windows cut anywhere: whole days, whole hours and part-hours add up to the clicks", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("random windows over three days of clicks at random seconds, both write paths, every kind of report", () =>
      Effect.gen(function* () {
        const admin = yield* newUser({ plan: "team" })
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const domainId = yield* newDomain(admin)
        const a = yield* newLink(admin, domainId, { alias: "alpha" })
        const b = yield* newLink(admin, domainId, { alias: "beta" })
        const c = yield* newLink(member, domainId, { alias: "gamma" })
        const next = seededRandom(20261125)
        const pick = <A,>(items: ReadonlyArray<A>) => items[Math.floor(next() * items.length)]!
        // Clicks bunch in a few hours, as real traffic does, and spread over the rest.
        const busy = [D0 + 9 * HOUR, D0 + DAY + 17 * HOUR, D0 + 2 * DAY + 23 * HOUR]
        const clicks: Array<TestClick> = Array.from({ length: 600 }, () => ({
          linkId: pick([a, a, b, c]),
          domainId,
          at: next() < 0.5 ? pick(busy) + Math.floor(next() * HOUR) : D0 + Math.floor(next() * 3 * DAY),
          country: pick(COUNTRIES),
          device: pick(DEVICES),
          referrer: pick(REFERRERS),
          qr: next() < 0.2,
          bot: next() < 0.1
        }))
        // Half through the retry path's statement, half through the summed batch's.
        yield* writeClicks(clicks.slice(0, 300))
        yield* Effect.flatMap(ClickRepo, (repo) => repo.insertFresh(ClickBatch.of(clicks.slice(300).map(clickRow)))).pipe(
          Effect.provide(ClickRepo.Default),
          Effect.orDie
        )

        // `%` and `_` are characters to find, not wildcards: no link holds either.
        for (const keyword of ["%", "_"]) {
          const matched = rowsOf(yield* report(admin, `/${domainId}/clicks/device`, { user_id: "all", keyword, from_unix: D0, to_unix: D0 + 3 * DAY }))
          expect(reported(matched, "device"), `keyword ${keyword}`).toEqual({})
        }

        const counted = clicks.filter((click) => click.bot !== true)
        const windows = Array.from({ length: 24 }, (_, n) => {
          // Some bounds on whole hours or minutes, most anywhere.
          const align = (seconds: number) => (n % 4 === 0 ? Math.floor(seconds / HOUR) * HOUR : n % 4 === 1 ? Math.floor(seconds / 60) * 60 : seconds)
          const from = align(D0 - HOUR + Math.floor(next() * 3 * DAY))
          return { from, to: Math.max(from + 1, align(from + Math.floor(next() * 2 * DAY))) }
        })
        for (const window of windows) {
          const inside = counted.filter((click) => click.at >= window.from && click.at < window.to)
          const query = { from_unix: window.from, to_unix: window.to }
          const label = `window ${window.from}-${window.to}`
          const day = (click: TestClick) => new Date(click.at * 1000).toISOString().slice(0, 10)

          const daily = rowsOf(yield* report(admin, `/${domainId}/clicks/daily`, { ...query, user_id: "all" }))
          expect(reported(daily, "date"), `E17 ${label}`).toEqual(tally(inside.map(day)))
          const scans = daily.reduce((sum, row) => sum + Number(row.scan_count), 0)
          expect(scans, `E17 scans ${label}`).toBe(inside.filter((click) => click.qr === true).length)

          const countries = rowsOf(yield* report(admin, `/${domainId}/clicks/country`, { ...query, user_id: "all" }))
          expect(reported(countries, "country"), `E18 ${label}`).toEqual(tally(inside.map((click) => click.country ?? "unknown")))

          const own = inside.filter((click) => click.linkId !== c)
          const referrers = rowsOf(yield* report(admin, `/${domainId}/clicks/referrer`, query))
          expect(reported(referrers, "referrer"), `E22 own links ${label}`).toEqual(tally(own.map((click) => click.referrer ?? "direct")))

          const alpha = inside.filter((click) => click.linkId === a)
          const devices = rowsOf(yield* report(admin, `/${domainId}/clicks/device`, { ...query, user_id: "all", keyword: "alpha" }))
          expect(reported(devices, "device"), `E21 keyword ${label}`).toEqual(tally(alpha.map((click) => click.device ?? "desktop")))

          const beta = inside.filter((click) => click.linkId === b)
          const hourly = rowsOf(yield* report(admin, `/${domainId}/links/${b}/clicks/hourly`, query))
          const hourOf = (click: TestClick) => String(new Date(click.at * 1000).getUTCHours())
          expect(reported(hourly, "hour"), `E24 ${label}`).toEqual(tally(beta.map(hourOf)))

          const clicked = rowsOf(yield* report(admin, `/${domainId}/links/clicked`, { ...query }))
          const perLink = tally(inside.map((click) => String(click.linkId)))
          const expectedOrder = Object.entries(perLink)
            .sort(([x, m], [y, n]) => n - m || Number(x) - Number(y))
            .map(([id]) => Number(id))
          expect(clicked.map((link) => link.id), `E16 ${label}`).toEqual(expectedOrder)
        }
      })
    )

    it.effect("hourly rollups older than the days reports read them for are pruned; reports there read the clicks", () =>
      Effect.gen(function* () {
        const admin = yield* newUser({ plan: "team" })
        const domainId = yield* newDomain(admin)
        const link = yield* newLink(admin, domainId, { alias: "old" })
        const today = Math.floor(Date.now() / 1000 / DAY) * DAY
        const long = today - 12 * DAY + 10 * HOUR
        const recent = today - 2 * DAY + 10 * HOUR
        yield* writeClicks([
          { linkId: link, domainId, at: long + 60, country: "DE" },
          { linkId: link, domainId, at: long + 1800, country: "FR" },
          { linkId: link, domainId, at: recent + 60, country: "DE" }
        ])
        const sql = yield* SqlClient.SqlClient
        const hours = () =>
          Effect.map(
            sql<{ hour: number }>`SELECT DISTINCT floor(extract(epoch FROM hour))::int8 AS hour FROM click_rollups_hour WHERE link_id = ${link}
              UNION SELECT DISTINCT floor(extract(epoch FROM hour))::int8 FROM click_rollups_user_hour r
              WHERE r.domain_id = ${domainId} ORDER BY 1`,
            (rows) => rows.map((row) => row.hour)
          )
        expect(yield* hours()).toEqual([long, recent])
        // The layer prunes once as it starts, in the background, and the call prunes again: either may
        // find the rows, so the rows left are what is checked.
        yield* Effect.flatMap(HourlyRollupPruner, (pruner) => pruner.prune).pipe(Effect.provide(HourlyRollupPruner.Default))
        expect(yield* hours()).toEqual([recent])
        // A window cutting that old hour is still exact: its part-day comes from the clicks.
        const countries = rowsOf(
          yield* report(admin, `/${domainId}/clicks/country`, { from_unix: long + 900, to_unix: long + 2 * HOUR, user_id: "all" })
        )
        expect(reported(countries, "country")).toEqual({ FR: 1 })
      })
    )
  })
})
