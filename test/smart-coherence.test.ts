import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, numberAt, stringAt, within } from "./support/Http.ts"
import { visit } from "./support/Redirects.ts"
import { removeTempDirs, type ServiceProcess, spawnService, tempDir, waitReady } from "./support/ServiceProcess.ts"
import { scopedServerDatabase, testServerUrl } from "./support/TestDatabase.ts"
import { BaseUrl } from "./support/TestServer.ts"

afterAll(removeTempDirs)

const on = (service: ServiceProcess) => Effect.provideService(BaseUrl, service.url)

const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

describe("smart-link settings on two instances", () => {
  it.scopedLive.skipIf(testServerUrl === undefined)(
    "rules changed on one instance are obeyed by the other within a second",
    () =>
      Effect.gen(function* () {
        const { url } = yield* scopedServerDatabase(testServerUrl!, "links_smart_two")
        const env = {
          DATABASE_URL: url,
          TOKEN_SECRET: "shared secret of both instances",
          ADMIN_EMAIL: "smart@example.org",
          ADMIN_PASSWORD: "a long operator password 42",
          RATE_LIMIT_PER_SECOND: "100000",
          RATE_LIMIT_PER_TOKEN_PER_SECOND: "100000",
          LOG_LEVEL: "warning"
        }
        const a = yield* spawnService({ ...env, DATA_DIR: tempDir() })
        yield* waitReady(a)
        const b = yield* spawnService({ ...env, DATA_DIR: tempDir() })
        yield* waitReady(b)
        const login = yield* call("POST", "/api/v4/access_token", { body: { email: env.ADMIN_EMAIL, password: env.ADMIN_PASSWORD } }).pipe(on(a))
        const token = stringAt(login.body, "access_token")
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
