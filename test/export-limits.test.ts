import { describe, expect, it, layer } from "@effect/vitest"
import { ConfigError, Effect, Either, Fiber, LogLevel, Ref } from "effect"
import { request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http"
import { appConfig, environment } from "../src/Config.ts"
import { Export } from "../src/Export/Export.ts"
import { clickRow, writeClickRows } from "./support/Clicks.ts"
import { newDomain, newLink } from "./support/Fixtures.ts"
import { call, codes, newUser, timed, type TestUser, within } from "./support/Http.ts"
import { newShortDomain, visit } from "./support/Redirects.ts"
import { testServerUrl } from "./support/TestDatabase.ts"
import { BaseUrl, TestServer } from "./support/TestServer.ts"

/** The bound the test sets: the brief's eight concurrent exports of one account, a ninth refused. */
const BOUND = 8
/** The domain's clicks, ten a second from T0: a file of about 9 MB, more than loopback sockets buffer (4 MB sent, 128 kB unread). */
const CLICKS = 80_000
/** The loops' window: the first 25,000 clicks, a file of about 2.8 MB. */
const LOOP_SECONDS = 2500
/** The other tenant's links visited once each while the loops run, at most. */
const UNCACHED = 150
/** How long the other tenant's requests are timed while the export loops run. */
const MEASURE_MS = 6000

const T0 = Math.floor((Date.now() / 1000 - 10 * 86_400) / 60) * 60

interface Opened {
  readonly status: number
  readonly response: IncomingMessage
  readonly request: ClientRequest
}

/** An export's answer as its headers arrive, its body left unread until the caller reads or drops it. */
const open = (base: string, path: string, user: TestUser) =>
  Effect.async<Opened>((resume) => {
    const request = httpRequest(`${base}${path}`, { headers: { authorization: `Bearer ${user.token}` } }, (response) => {
      response.pause()
      resume(Effect.succeed({ status: response.statusCode ?? 0, response, request }))
    })
    request.on("error", (error) => resume(Effect.dieMessage(`export request failed: ${error.message}`)))
    request.end()
    return Effect.sync(() => request.destroy())
  })

/** Reads an opened answer to its end, discarding the bytes; how many there were, or -1 if it was cut. */
const drain = (opened: Opened) =>
  Effect.async<number>((resume) => {
    let bytes = 0
    opened.response.on("data", (chunk: Buffer) => {
      bytes += chunk.length
    })
    // "close" follows "end" too: a complete answer is its bytes, one cut short is -1.
    opened.response.on("close", () => resume(Effect.succeed(opened.response.complete ? bytes : -1)))
    opened.response.on("error", () => undefined)
    opened.response.resume()
    return Effect.sync(() => opened.request.destroy())
  })

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

const expectBusy = (status: number, body: string, retryAfter: string | undefined) => {
  expect(status, body).toBe(503)
  expect(JSON.parse(body)).toEqual({ errors: [{ code: 10901, message: "too many concurrent requests of this kind, try again shortly" }] })
  expect(retryAfter).toBe("1")
}

const read = (env: Record<string, string>) => Effect.either(Effect.withConfigProvider(appConfig, environment(env)))

const problem = (result: Either.Either<unknown, ConfigError.ConfigError>) =>
  Either.match(result, { onLeft: (error) => String(error), onRight: () => "" })

describe("EXPORT_CONCURRENCY_PER_ACCOUNT (configuration)", () => {
  it.effect("defaults to 2, takes 1-100, and refuses anything else naming the variable", () =>
    Effect.gen(function* () {
      expect(Either.map(yield* read({}), (c) => c.exportConcurrencyPerAccount)).toEqual(Either.right(2))
      for (const value of [1, 100]) {
        expect(Either.map(yield* read({ EXPORT_CONCURRENCY_PER_ACCOUNT: String(value) }), (c) => c.exportConcurrencyPerAccount)).toEqual(Either.right(value))
      }
      for (const value of ["0", "101", "-1", "many", "1.5"]) {
        expect(problem(yield* read({ EXPORT_CONCURRENCY_PER_ACCOUNT: value })), value).toContain("EXPORT_CONCURRENCY_PER_ACCOUNT")
      }
      expect(problem(yield* read({ EXPORT_CONCURRENCY_PER_ACCOUNT: "101" }))).toContain("must be from 1 to 100")
    })
  )
})

describe(`concurrent exports of one account (${testServerUrl === undefined ? "embedded database" : "PostgreSQL"})`, () => {
  layer(TestServer({ EXPORT_CONCURRENCY_PER_ACCOUNT: String(BOUND) }, LogLevel.None), { excludeTestServices: true })((it) => {
    it.effect(`${BOUND} export loops of one account leave another tenant's API p99 under 300 ms; one more export gets 503 10901 at once`, () =>
      Effect.gen(function* () {
        const base = yield* BaseUrl
        const hog = yield* newUser()
        const domainId = yield* newDomain(hog)
        const linkIds = [yield* newLink(hog, domainId), yield* newLink(hog, domainId), yield* newLink(hog, domainId)]
        for (let from = 0; from < CLICKS; from += 20_000) {
          yield* writeClickRows(Array.from({ length: 20_000 }, (_, n) => clickRow({ linkId: linkIds[n % 3]!, domainId, at: T0 + Math.floor((from + n) / 10) })))
        }
        const exportOf = (seconds: number) => `/api/v4/${domainId}/export/clicks.csv?from_unix=${T0}&to_unix=${T0 + seconds}`
        const path = exportOf(LOOP_SECONDS)
        const large = exportOf(CLICKS / 10)
        const tenant = yield* newUser()
        const { id: tenantDomain, name: tenantHost } = yield* newShortDomain(tenant)
        const tenantLink = yield* newLink(tenant, tenantDomain)
        // Links of the other tenant never visited yet: each visit below is a miss of the redirect cache.
        const aliases = Array.from({ length: UNCACHED }, (_, n) => `fresh${n}`)
        for (const alias of aliases) yield* newLink(tenant, tenantDomain, { alias })
        const exports = yield* Export

        // One export of the loops' window: how big the file is, so that their exports can be checked complete.
        const whole = yield* drain(yield* open(base, path, hog))
        expect(whole).toBeGreaterThan(LOOP_SECONDS * 10 * 100)

        // Backpressure: a client that reads nothing stops its export once the sockets' buffers are full,
        // rather than the file being read and buffered whole; it keeps its place meanwhile.
        const held = yield* Effect.forEach(Array.from({ length: BOUND }), () => open(base, large, hog), { concurrency: "unbounded" })
        for (const opened of held) expect(opened.status).toBe(200)
        yield* Effect.sleep("2 seconds")
        expect(exports.exporting(hog.accountId)).toBe(BOUND)
        // The bound: with BOUND answers held so, the next export is refused at once.
        const [refused, refusedMs] = yield* timed(call("GET", path, { token: hog.token }))
        expectBusy(refused.status, refused.text, refused.headers.get("retry-after") ?? undefined)
        expect(refusedMs).toBeLessThan(2000)
        // Links exports of the account count too; another account is not refused.
        expect(codes(yield* call("GET", `/api/v4/${domainId}/export/links.csv`, { token: hog.token }))).toEqual([10901])
        expect((yield* call("GET", `/api/v4/${tenantDomain}/export/links.csv`, { token: tenant.token })).status).toBe(200)
        // Clients that go away free their exports' places.
        for (const opened of held) opened.request.destroy()
        expect(yield* within(5000, Effect.sync(() => exports.exporting(hog.accountId) === 0))).toBeLessThan(5000)

        // BOUND loops exporting as fast as they can read, while the other tenant's requests are timed.
        const stop = yield* Ref.make(false)
        const loop = Effect.gen(function* () {
          const sizes: Array<number> = []
          while (!(yield* Ref.get(stop))) {
            const opened = yield* open(base, path, hog)
            expect(opened.status).toBe(200)
            sizes.push(yield* drain(opened))
          }
          return sizes
        })
        const loops = yield* Effect.forEach(Array.from({ length: BOUND }), () => Effect.fork(loop))
        expect(yield* within(10_000, Effect.sync(() => exports.exporting(hog.accountId) === BOUND))).toBeLessThan(10_000)
        const latencies: Array<number> = []
        const redirects: Array<number> = []
        const started = Date.now()
        while (Date.now() - started < MEASURE_MS) {
          for (const tenantPath of ["/api/v4/domains", `/api/v4/${tenantDomain}/links/${tenantLink}`]) {
            const [reply, ms] = yield* timed(call("GET", tenantPath, { token: tenant.token }))
            expect(reply.status, reply.text).toBe(200)
            latencies.push(ms)
          }
          const alias = aliases[redirects.length]
          if (alias !== undefined) {
            const redirect = yield* visit(tenantHost, `/${alias}`)
            expect(redirect.status, redirect.text).toBe(301)
            redirects.push(redirect.ms)
          }
        }
        yield* Ref.set(stop, true)
        const sizes = (yield* Effect.forEach(loops, Fiber.join)).flat()
        const p50 = percentile(latencies, 50)
        const p99 = percentile(latencies, 99)
        const redirectP99 = percentile(redirects, 99)
        console.log(
          `export loops: ${sizes.length} exports of ${whole} bytes; tenant: ${latencies.length} requests, p50 ${p50.toFixed(1)} ms, ` +
            `p99 ${p99.toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms; ${redirects.length} uncached redirects, ` +
            `p50 ${percentile(redirects, 50)} ms, p99 ${redirectP99} ms`
        )
        expect(sizes.length).toBeGreaterThanOrEqual(BOUND)
        for (const size of sizes) expect(size).toBe(whole)
        expect(p99).toBeLessThan(300)
        expect(redirectP99).toBeLessThan(300)
        expect(latencies.length).toBeGreaterThan(20)
      }), { timeout: 180_000 }
    )
  })
})
