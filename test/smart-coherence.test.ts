import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, numberAt, within } from "./support/Http.ts"
import { visit } from "./support/Redirects.ts"
import { removeTempDirs, type ServiceProcess } from "./support/ServiceProcess.ts"
import { testServerUrl } from "./support/TestDatabase.ts"
import { on, twoInstances } from "./support/TwoInstances.ts"
import { describeUnless, withoutServer } from "./support/SkipReasons.ts"

afterAll(removeTempDirs)

const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

describe("smart-link settings on two instances", () => {
  describeUnless(withoutServer("two instances share one database"), "on a PostgreSQL server", () => {
    it.scopedLive(
      "rules changed on one instance are obeyed by the other within a second",
      () =>
        Effect.gen(function* () {
          const { a, b, token } = yield* twoInstances(testServerUrl!, "links_smart_two")
          const domain = yield* call("POST", "/api/v4/domains", { token, body: { domain: "smart-two.example" } }).pipe(on(a))
          const domainId = numberAt(domain.body, "objects", 0, "id")
          const created = yield* call("POST", `/api/v4/${domainId}/links`, {
            token,
            body: { url: "https://example.com/plain", alias: "s", override_404_check: 1 }
          }).pipe(on(a))
          const linkId = numberAt(created.body, "objects", 0, "id")
          const locationOn = (service: ServiceProcess) =>
            Effect.map(visit("smart-two.example", "/s", { headers: { "user-agent": FIREFOX } }).pipe(on(service)), (reply) => reply.headers.location)
          const obeys = (service: ServiceProcess, location: string) => Effect.map(locationOn(service), (seen) => seen === location)
          // B has the link cached without settings.
          expect(yield* within(1000, obeys(b, "https://example.com/plain"))).toBeLessThan(1000)
          for (let n = 0; n < 5; n++) expect(yield* locationOn(b)).toBe("https://example.com/plain")

          const settings = (body: unknown) => call("PUT", `/api/v4/${domainId}/links/${linkId}/settings`, { token, body }).pipe(on(a))
          expect((yield* settings({ rules: [{ when: { browser: ["firefox"] }, url: "https://example.com/fox" }] })).status).toBe(200)
          expect(yield* within(1000, obeys(b, "https://example.com/fox"))).toBeLessThan(1000)

          expect((yield* settings({ rules: [{ when: { browser: ["chrome"] }, url: "https://example.com/chrome" }] })).status).toBe(200)
          expect(yield* within(1000, obeys(b, "https://example.com/plain"))).toBeLessThan(1000)

          expect((yield* settings({ rules: [{ when: { os: ["linux"] }, url: "https://example.com/linux" }] })).status).toBe(200)
          expect(yield* within(1000, obeys(b, "https://example.com/linux"))).toBeLessThan(1000)
          expect(yield* locationOn(a)).toBe("https://example.com/linux")

          // Cleared: back to the link's URL everywhere.
          expect((yield* settings({})).status).toBe(200)
          expect(yield* within(1000, obeys(b, "https://example.com/plain"))).toBeLessThan(1000)
        }),
      120_000
    )
  })
})
