/**
 * Example (c): the service's Layers in an embedder's own @effect/vitest tests, over PGlite in memory
 * (`link-shortener/testing`), with TestClock moving the time the services decide by.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { Accounts, ACCESS_TOKEN_LIFETIME_SECONDS, Callers, Domains, Links, Sessions } from "link-shortener"
import { callerOf, testServicesLayer } from "link-shortener/testing"

const email = "owner@example.com"
const password = "correct horse battery staple"

/** Real time, for the scheduler's fiber to finish the sweep TestClock started. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))

describe("the service's Layers under TestClock", () => {
  layer(testServicesLayer(), { timeout: "120 seconds" })((it) => {
    it.effect("an access token stops working when the clock passes its lifetime", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.now())
        yield* (yield* Accounts).bootstrap(email, password)
        const session = yield* (yield* Sessions).accessToken({ email, password })
        const callers = yield* Callers
        const caller = yield* callers.ofAccessToken(session.accessToken)
        expect(caller.email).toBe(email)

        yield* TestClock.adjust(`${ACCESS_TOKEN_LIFETIME_SECONDS - 1} seconds`)
        yield* callers.ofAccessToken(session.accessToken)
        yield* TestClock.adjust("2 seconds")
        const refused = yield* Effect.flip(callers.ofAccessToken(session.accessToken))
        expect(refused._tag).toBe("InvalidToken")
      })
    )

    it.effect("the scheduler archives a link when the clock reaches its archive_on", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.now() + 2 * ACCESS_TOKEN_LIFETIME_SECONDS * 1000)
        yield* (yield* Accounts).bootstrap(email, password)
        const caller = yield* callerOf(email, password)
        const domain = yield* (yield* Domains).create(caller, { domain: "go.example" })
        const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const links = yield* Links
        const { link } = yield* links.create(caller, domain.id, {
          url: "https://example.com/sale",
          override_404_check: true,
          archive_on: now + 60
        })
        const statusOf = Effect.map(links.get(caller, domain.id, link.id), (found) => found.status)

        yield* TestClock.adjust("45 seconds")
        yield* settle
        expect(yield* statusOf).toBe("active")

        yield* TestClock.adjust("30 seconds")
        let status = yield* statusOf
        for (let waited = 0; status === "active" && waited < 50; waited++) {
          yield* settle
          status = yield* statusOf
        }
        expect(status).toBe("archived")
      })
    )
  })
})
