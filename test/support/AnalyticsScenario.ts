import { Effect } from "effect"
import { newDomain, newLink } from "./Fixtures.ts"
import { call, newUser, numberAt, type TestUser } from "./Http.ts"
import { writeClicks } from "./Clicks.ts"

/** 2025-03-10T00:00:00Z, a Monday: the first day of the scenario's clicks. */
export const D0 = 1_741_564_800
export const HOUR = 3600
export const DAY = 86_400

export interface Scenario {
  readonly admin: TestUser
  readonly member: TestUser
  readonly domainId: number
  /** The admin's link tagged "promo". */
  readonly a: number
  /** The admin's link with notes "spring sale". */
  readonly b: number
  /** The member's link. */
  readonly c: number
  readonly promoTagId: number
}

/**
 * An account on the team plan with an admin and a member, one domain, three links and these clicks
 * (UTC; none at or after D0 + 4 days):
 *
 * | link | at           | country/region/city          | device  | referrer   | ip | qr  | bot |
 * |------|--------------|------------------------------|---------|------------|----|-----|-----|
 * | a    | D0 01:00     | US/California/Mountain View  | desktop | google.com | 1  |     |     |
 * | a    | D0 02:00     | US/California/San Jose       | mobile  | google.com | 2  |     |     |
 * | a    | D0+1d 05:00  | DE/Berlin/Berlin             | mobile  | direct     | 1  | yes |     |
 * | a    | D0+1d 06:00  | US/California/Mountain View  | bot     | google.com | 9  |     | yes |
 * | a    | D0+3d 23:00  | unknown                      | tablet  | t.co       | 3  |     |     |
 * | b    | D0+1d 01:00  | US/New York/New York         | desktop | direct     | 4  |     |     |
 * | b    | D0+2d 12:00  | US/California/Mountain View  | desktop | google.com | 4  | yes |     |
 * | c    | D0 02:00     | FR/Île-de-France/Paris       | other   | direct     | 5  |     |     |
 */
export const analyticsScenario = (plan: "team" | "free" = "team") =>
  Effect.gen(function* () {
    const admin = yield* newUser({ plan })
    const member = yield* newUser({ accountId: admin.accountId, role: "member" })
    const domainId = yield* newDomain(admin)
    const a = yield* newLink(admin, domainId, { alias: "alpha", url: "https://example.com/a", tags: [{ name: "promo", shared: true }] })
    const b = yield* newLink(admin, domainId, { alias: "beta", url: "https://example.com/b", notes: "spring sale" })
    const c = yield* newLink(member, domainId, { alias: "gamma", url: "https://example.com/c" })
    const tags = yield* call("GET", `/api/v4/tags?domain_id=${domainId}`, { token: admin.token })
    const promoTagId = numberAt(tags.body, "objects", 0, "id")
    const usCa = { country: "US", region: "California" } as const
    yield* writeClicks([
      { linkId: a, domainId, at: D0 + HOUR, ip: "1", ...usCa, city: "Mountain View", device: "desktop", referrer: "google.com" },
      { linkId: a, domainId, at: D0 + 2 * HOUR, ip: "2", ...usCa, city: "San Jose", device: "mobile", referrer: "google.com" },
      { linkId: a, domainId, at: D0 + DAY + 5 * HOUR, ip: "1", country: "DE", region: "Berlin", city: "Berlin", device: "mobile", qr: true },
      { linkId: a, domainId, at: D0 + DAY + 6 * HOUR, ip: "9", ...usCa, city: "Mountain View", referrer: "google.com", bot: true },
      { linkId: a, domainId, at: D0 + 3 * DAY + 23 * HOUR, ip: "3", device: "tablet", referrer: "t.co" },
      { linkId: b, domainId, at: D0 + DAY + HOUR, ip: "4", country: "US", region: "New York", city: "New York", device: "desktop" },
      { linkId: b, domainId, at: D0 + 2 * DAY + 12 * HOUR, ip: "4", ...usCa, city: "Mountain View", referrer: "google.com", qr: true },
      { linkId: c, domainId, at: D0 + 2 * HOUR, ip: "5", country: "FR", region: "Île-de-France", city: "Paris", device: "other" }
    ])
    return { admin, member, domainId, a, b, c, promoTagId } satisfies Scenario
  })

/** GET of an analytics path under /api/v4 with query parameters, as `user`. */
export const report = (user: TestUser, path: string, query: Record<string, string | number> = {}) => {
  const search = new URLSearchParams(Object.entries(query).map(([key, value]): [string, string] => [key, String(value)])).toString()
  return call("GET", `/api/v4${path}${search === "" ? "" : `?${search}`}`, { token: user.token })
}

/** The four days of the scenario as a window. */
export const FOUR_DAYS = { from_unix: D0, to_unix: D0 + 4 * DAY } as const
