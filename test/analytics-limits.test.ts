import { describe, expect, it, layer } from "@effect/vitest"
import { ConfigError, Effect, Either, Fiber } from "effect"
import { Analytics } from "../src/Analytics/Analytics.ts"
import { appConfig, environment } from "../src/Config.ts"
import { analyticsScenario, FOUR_DAYS, report } from "./support/AnalyticsScenario.ts"
import { call, codes, type Reply, timed, within } from "./support/Http.ts"
import { holdLocks, waitingOnLocks } from "./support/Locks.ts"
import { TestServer } from "./support/TestServer.ts"
import { describeUnless, withoutServer } from "./support/SkipReasons.ts"

const read = (env: Record<string, string>) => Effect.either(Effect.withConfigProvider(appConfig, environment(env)))

const problem = (result: Either.Either<unknown, ConfigError.ConfigError>) =>
  Either.match(result, { onLeft: (error) => String(error), onRight: () => "" })

/** Every table a report can read: the clicks and their rollups. */
const CLICK_TABLES = "click%"

const window = `from_unix=${FOUR_DAYS.from_unix}&to_unix=${FOUR_DAYS.to_unix}`

/** A request that would wait for ever on today's code fails the test instead of hanging it. */
const bounded = <R>(request: Effect.Effect<Reply, never, R>) =>
  request.pipe(Effect.timeoutFail({ duration: "15 seconds", onTimeout: () => "no answer in 15 s" }))

const expectBusy = (reply: Reply) => {
  expect(reply.status, reply.text).toBe(503)
  expect(reply.body).toEqual({ errors: [{ code: 10901, message: "too many concurrent requests of this kind, try again shortly" }] })
  expect(reply.headers.get("retry-after")).toBe("1")
}

const noneWaiting = Effect.map(waitingOnLocks, (n) => n === 0)

const waiting = (count: number) => Effect.map(waitingOnLocks, (n) => n >= count)

describe("ANALYTICS_TIMEOUT_SECONDS and ANALYTICS_CONCURRENCY_PER_ACCOUNT (configuration)", () => {
  it.effect("default to 10 s and 2 reports, take 1-600 and 1-100, and refuse anything else naming the variable", () =>
    Effect.gen(function* () {
      const defaults = yield* read({})
      expect(Either.map(defaults, (c) => [c.analyticsTimeoutSeconds, c.analyticsConcurrencyPerAccount])).toEqual(Either.right([10, 2]))
      const edges = yield* read({ ANALYTICS_TIMEOUT_SECONDS: "600", ANALYTICS_CONCURRENCY_PER_ACCOUNT: "1" })
      expect(Either.map(edges, (c) => [c.analyticsTimeoutSeconds, c.analyticsConcurrencyPerAccount])).toEqual(Either.right([600, 1]))
      const other = yield* read({ ANALYTICS_TIMEOUT_SECONDS: "1", ANALYTICS_CONCURRENCY_PER_ACCOUNT: "100" })
      expect(Either.map(other, (c) => [c.analyticsTimeoutSeconds, c.analyticsConcurrencyPerAccount])).toEqual(Either.right([1, 100]))
      for (const value of ["0", "601", "-5", "ten", "1.5"]) {
        const message = problem(yield* read({ ANALYTICS_TIMEOUT_SECONDS: value }))
        expect(message, value).toContain("ANALYTICS_TIMEOUT_SECONDS")
      }
      expect(problem(yield* read({ ANALYTICS_TIMEOUT_SECONDS: "601" }))).toContain("must be from 1 to 600")
      for (const value of ["0", "101", "many"]) {
        const message = problem(yield* read({ ANALYTICS_CONCURRENCY_PER_ACCOUNT: value }))
        expect(message, value).toContain("ANALYTICS_CONCURRENCY_PER_ACCOUNT")
      }
      expect(problem(yield* read({ ANALYTICS_CONCURRENCY_PER_ACCOUNT: "0" }))).toContain("must be from 1 to 100")
    })
  )
})

// A statement that waits for a lock another session holds is a slow report made deterministic; the
// embedded database has one connection, so these need PostgreSQL.
describeUnless(withoutServer("the slow report waits for a lock another session holds; the embedded database has one session"), "a report past ANALYTICS_TIMEOUT_SECONDS (PostgreSQL)", () => {
  layer(TestServer({ ANALYTICS_TIMEOUT_SECONDS: "1" }), { excludeTestServices: true })((it) => {
    it.effect("gets 503 10508 with Retry-After after about 1 s, v4 and v3, and its statement is cancelled", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const analytics = yield* Analytics
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* holdLocks(CLICK_TABLES)
            for (const version of ["v4", "v3"]) {
              const [reply, ms] = yield* timed(bounded(call("GET", `/api/${version}/${s.domainId}/clicks/daily?${window}`, { token: s.admin.token })))
              expect(reply.status, `${version} ${reply.text}`).toBe(503)
              expect(reply.body).toEqual({
                errors: [{ code: 10508, message: "the report did not finish within the time limit; narrow the window or the filters" }]
              })
              expect(reply.headers.get("retry-after")).toBe("1")
              expect(ms).toBeGreaterThan(900)
              expect(ms).toBeLessThan(5000)
              // The lock is still held: a statement no longer waiting for it was cancelled.
              expect(yield* within(3000, noneWaiting), version).toBeLessThan(3000)
            }
            const [linkReply] = yield* timed(bounded(report(s.admin, `/${s.domainId}/links/${s.a}/clicks/country`, FOUR_DAYS)))
            expect(codes(linkReply)).toEqual([10508])
            expect(yield* within(3000, noneWaiting)).toBeLessThan(3000)
          })
        )
        expect((yield* report(s.admin, `/${s.domainId}/clicks/daily`, FOUR_DAYS)).status).toBe(200)
        expect(yield* within(3000, Effect.sync(() => analytics.accountsReporting() === 0))).toBeLessThan(3000)
      })
    )
  })
})

describeUnless(withoutServer("reports run at once in sessions of their own; the embedded database has one session"), "concurrent reports of one account (PostgreSQL)", () => {
  layer(TestServer({ ANALYTICS_TIMEOUT_SECONDS: "60" }), { excludeTestServices: true })((it) => {
    it.effect("beyond ANALYTICS_CONCURRENCY_PER_ACCOUNT (2) one gets 503 10901 at once; another account is not refused", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const other = yield* analyticsScenario()
        const analytics = yield* Analytics
        const running = yield* Effect.scoped(
          Effect.gen(function* () {
            const lock = yield* holdLocks(CLICK_TABLES)
            const first = yield* Effect.fork(bounded(report(s.admin, `/${s.domainId}/clicks/daily`, FOUR_DAYS)))
            const second = yield* Effect.fork(bounded(report(s.member, `/${s.domainId}/links/${s.c}/clicks/country`, FOUR_DAYS)))
            expect(yield* within(5000, waiting(2))).toBeLessThan(5000)
            // A third of the account, by any user and report, is refused without waiting.
            for (const path of [`/${s.domainId}/clicks/device`, `/${s.domainId}/links/${s.a}/clicks`]) {
              const [busy, ms] = yield* timed(bounded(report(s.admin, path, FOUR_DAYS)))
              expectBusy(busy)
              expect(ms).toBeLessThan(2000)
            }
            expectBusy(yield* bounded(report(s.member, `/${s.domainId}/clicks/daily`, FOUR_DAYS)))
            const v3 = yield* bounded(call("GET", `/api/v3/${s.domainId}/clicks/city?${window}`, { token: s.admin.token }))
            expect(codes(v3)).toEqual([10901])
            const third = yield* Effect.fork(bounded(report(other.admin, `/${other.domainId}/clicks/daily`, FOUR_DAYS)))
            expect(yield* within(5000, waiting(3))).toBeLessThan(5000)
            expect(analytics.accountsReporting()).toBe(2)
            yield* lock.release
            return [first, second, third] as const
          })
        )
        for (const fiber of running) {
          const reply = yield* Fiber.join(fiber)
          expect(reply.status, reply.text).toBe(200)
        }
        expect(yield* within(3000, Effect.sync(() => analytics.accountsReporting() === 0))).toBeLessThan(3000)
        expect((yield* report(s.admin, `/${s.domainId}/clicks/device`, FOUR_DAYS)).status).toBe(200)
      })
    )
  })
})

describeUnless(withoutServer("the slow request waits for a lock another session holds; the embedded database has one session"), "an API request past API_DEADLINE_SECONDS (PostgreSQL)", () => {
  layer(TestServer({ API_DEADLINE_SECONDS: "1", ANALYTICS_TIMEOUT_SECONDS: "600" }), { excludeTestServices: true })((it) => {
    it.effect("is answered 503 10902 and its statement is cancelled, a report's as any other's", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const analytics = yield* Analytics
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* holdLocks("domains")
            const [reply, ms] = yield* timed(bounded(call("GET", "/api/v4/domains", { token: s.admin.token })))
            expect(reply.status, reply.text).toBe(503)
            expect(codes(reply)).toEqual([10902])
            expect(ms).toBeLessThan(5000)
            expect(yield* within(3000, noneWaiting)).toBeLessThan(3000)
          })
        )
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* holdLocks(CLICK_TABLES)
            expect(codes(yield* bounded(report(s.admin, `/${s.domainId}/clicks/daily`, FOUR_DAYS)))).toEqual([10902])
            expect(yield* within(3000, noneWaiting)).toBeLessThan(3000)
          })
        )
        expect(yield* within(3000, Effect.sync(() => analytics.accountsReporting() === 0))).toBeLessThan(3000)
        expect((yield* call("GET", "/api/v4/domains", { token: s.admin.token })).status).toBe(200)
        expect((yield* report(s.admin, `/${s.domainId}/clicks/daily`, FOUR_DAYS)).status).toBe(200)
      })
    )
  })
})
