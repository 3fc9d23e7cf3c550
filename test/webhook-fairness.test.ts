import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SENDS_PER_ACCOUNT } from "../src/Webhooks/Dispatcher.ts"
import { newLink } from "./support/Fixtures.ts"
import { at, call, newUser, numberAt, type TestUser, within } from "./support/Http.ts"
import { receiver } from "./support/Receiver.ts"
import { newShortDomain } from "./support/Redirects.ts"
import { testServerUrl } from "./support/TestDatabase.ts"
import { TestServer } from "./support/TestServer.ts"

/** The default delivery timeout: a hanging receiver holds its delivery this long, then it is retried. */
const TIMEOUT_SECONDS = 10
/** The first account's receivers, all hanging. */
const HANGING = 10

const newWebhook = (user: TestUser, domainId: number, url: string) =>
  Effect.map(call("POST", `/api/v4/${domainId}/webhooks`, { token: user.token, body: { url, events: ["link.created"] } }), (reply) => {
    if (reply.status !== 200) throw new Error(`webhook create failed: ${reply.text}`)
    return numberAt(reply.body, "objects", 0, "id")
  })

const attemptsOf = (user: TestUser, domainId: number, webhookId: number) =>
  Effect.map(call("GET", `/api/v4/${domainId}/webhooks/${webhookId}/deliveries`, { token: user.token }), (reply) =>
    ((at(reply.body, "objects") ?? []) as ReadonlyArray<unknown>).flatMap((delivery) => (at(delivery, "attempts") ?? []) as ReadonlyArray<unknown>)
  )

describe(`webhook deliveries of one account beside another's hanging receivers (${testServerUrl === undefined ? "embedded database" : "PostgreSQL"})`, () => {
  layer(TestServer({ URL_CHECK_ALLOW_PRIVATE: "true", WEBHOOK_POLL_MILLIS: "100", WEBHOOK_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS) }), {
    excludeTestServices: true
  })((it) => {
    it.scoped(`arrive within 5 s while ${HANGING} receivers of the first account accept and never answer; those still time out`, () =>
      Effect.gen(function* () {
        const slow = yield* newUser()
        const slowDomain = yield* newShortDomain(slow)
        const hanging = yield* Effect.forEach(Array.from({ length: HANGING }), () => receiver(() => "hang"))
        const hooks = yield* Effect.forEach(hanging, (hook) => newWebhook(slow, slowDomain.id, hook.url))
        // Five events: fifty deliveries of the first account, all due at once, more than an instance sends at once.
        for (let n = 0; n < 5; n++) yield* newLink(slow, slowDomain.id)
        const received = () => hanging.reduce((sum, hook) => sum + hook.received.length, 0)
        expect(yield* within(5000, Effect.sync(() => received() >= SENDS_PER_ACCOUNT))).toBeLessThan(5000)

        const others = yield* Effect.forEach([0, 1], () =>
          Effect.gen(function* () {
            const user = yield* newUser()
            const domain = yield* newShortDomain(user)
            const hook = yield* receiver()
            yield* newWebhook(user, domain.id, hook.url)
            return { user, domain, hook }
          })
        )
        const started = Date.now()
        for (const other of others) yield* newLink(other.user, other.domain.id)
        for (const other of others) {
          const took = yield* within(5000, Effect.sync(() => other.hook.received.length >= 1))
          expect(took, "another account's delivery").toBeLessThan(5000)
        }
        const arrivedMs = Date.now() - started
        // Meanwhile the first account's receivers held its share of requests, no more, none timed out yet.
        const held = received()
        console.log(`other accounts' deliveries in ${arrivedMs} ms; the first account's receivers hold ${held} requests`)
        expect(arrivedMs).toBeLessThan(TIMEOUT_SECONDS * 1000 - 2000)
        expect(held).toBe(SENDS_PER_ACCOUNT)

        // The delivery timeout still applies to the hanging ones: logged as such, and retried.
        const timedOut = Effect.map(
          Effect.forEach(hooks, (id) => attemptsOf(slow, slowDomain.id, id)),
          (attempts) => attempts.flat().filter((attempt) => at(attempt, "error") === `no answer within ${TIMEOUT_SECONDS} s`).length >= held
        )
        expect(yield* within(TIMEOUT_SECONDS * 1000 + 10_000, timedOut)).toBeLessThan(TIMEOUT_SECONDS * 1000 + 10_000)
      }), { timeout: 90_000 }
    )
  })
})
