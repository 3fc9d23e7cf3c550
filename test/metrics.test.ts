import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { Shutdown } from "../src/Platform/Shutdown.ts"
import { newLink } from "./support/Fixtures.ts"
import { call, newUser } from "./support/Http.ts"
import { parseExposition, samplesOf, valueOf } from "./support/Prometheus.ts"
import { promLint } from "./support/PromLint.ts"
import { newShortDomain, visit } from "./support/Redirects.ts"
import { TestServer } from "./support/TestServer.ts"

const scrapeText = Effect.map(call("GET", "/metrics"), (reply) => {
  expect(reply.status, reply.text).toBe(200)
  return reply.text
})

const scrape = Effect.map(scrapeText, parseExposition)

/** The metric names docs/OPERATIONS.md's "Metrics" section documents (each in backticks at the start of a table row). */
const documented = (): ReadonlyArray<string> => {
  const readme = readFileSync(new URL("../docs/OPERATIONS.md", import.meta.url), "utf8")
  const section = readme.slice(readme.indexOf("### Metrics"), readme.indexOf("\n### ", readme.indexOf("### Metrics") + 1))
  return [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]!)
}

const THREAD_TIME = ["thread_cpu_seconds_total", "thread_runqueue_wait_seconds_total"]

const manifest: unknown = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))

describe("/metrics", () => {
  layer(TestServer(), { excludeTestServices: true })("of a service", (it) => {
    it.effect("passes promtool's checks (strictly), has every documented family from the first scrape and nothing undocumented", () =>
      Effect.gen(function* () {
        const text = yield* scrapeText
        expect(promLint(text)).toEqual([])
        const exposition = parseExposition(text)
        const families = [...exposition.types.keys()]
        expect(families.filter((name) => name.startsWith("effect_"))).toEqual([])
        const names = documented()
        expect(names.length).toBeGreaterThan(30)
        // Families whose series come with their first use (one per route and status), and those only Linux tells.
        const perUse = new Set([
          "http_requests_total",
          "http_request_duration_seconds",
          ...(process.platform === "linux" ? [] : THREAD_TIME)
        ])
        expect(names.filter((name) => !perUse.has(name) && !families.includes(name))).toEqual([])
        expect(families.filter((name) => !names.includes(name))).toEqual([])
        for (const counter of ["clicks_spilled_total", "clicks_replayed_total", "redirect_cache_misses_total", "redirect_cache_hits_total"]) {
          expect(samplesOf(exposition, counter).length, counter).toBe(1)
        }
        for (const reason of ["rate_limited", "overloaded", "database_unavailable", "deadline", "stopping", "report_too_slow"]) {
          expect(samplesOf(exposition, "http_unavailable_total", { reason }).length, reason).toBe(1)
        }
      })
    )

    it.effect("process, runtime, pool and build figures", () =>
      Effect.gen(function* () {
        const exposition = yield* scrape
        expect(valueOf(exposition, "process_resident_memory_bytes")).toBeGreaterThan(10_000_000)
        expect(valueOf(exposition, "process_cpu_seconds_total")).toBeGreaterThan(0)
        expect(valueOf(exposition, "nodejs_heap_size_used_bytes")).toBeGreaterThan(1_000_000)
        expect(valueOf(exposition, "process_start_time_seconds")).toBeGreaterThan(Date.now() / 1000 - 3600)
        expect(valueOf(exposition, "process_start_time_seconds")).toBeLessThanOrEqual(Date.now() / 1000)
        expect(samplesOf(exposition, "nodejs_gc_duration_seconds_count").map((sample) => sample.labels.kind).sort()).toEqual(["incremental", "major", "minor", "weakcb"])
        const [build] = samplesOf(exposition, "build_info")
        expect(build?.value).toBe(1)
        expect(build?.labels).toMatchObject({ node_version: process.version, version: (manifest as { version: string }).version })
        expect(build?.labels.commit).toMatch(/^([0-9a-f]{40}|unknown)$/)
        expect(valueOf(exposition, "db_pool_max_connections")).toBeGreaterThan(0)
        expect(valueOf(exposition, "db_pool_connections", { state: "in_use" })).toBeGreaterThanOrEqual(0)
        expect(valueOf(exposition, "db_pool_connections", { state: "idle" })).toBeGreaterThanOrEqual(0)
        expect(valueOf(exposition, "db_pool_waiting_requests")).toBe(0)
        expect(valueOf(exposition, "dependency_up", { dependency: "database" })).toBe(1)
      })
    )

    it.effect("a redirect: its latency in the histogram, a cache miss then a hit, the link cached", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        yield* newLink(user, domain.id, { alias: "measured" })
        const before = yield* scrape
        expect((yield* visit(domain.name, "/measured")).status).toBe(301)
        expect((yield* visit(domain.name, "/measured")).status).toBe(301)
        const after = yield* scrape
        const delta = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels)
        expect(delta("redirect_duration_seconds_count")).toBe(2)
        expect(delta("redirect_duration_seconds_bucket", { le: "+Inf" })).toBe(2)
        expect(delta("redirect_duration_seconds_sum")).toBeGreaterThan(0)
        expect(delta("redirect_duration_seconds_sum")).toBeLessThan(5)
        expect(delta("redirect_cache_misses_total")).toBe(1)
        expect(delta("redirect_cache_hits_total")).toBe(1)
        expect(delta("redirects_total", { status: "301" })).toBe(2)
        expect(valueOf(after, "redirect_cache_entries", { cache: "links" })).toBeGreaterThanOrEqual(1)
        expect(valueOf(after, "redirect_cache_entries", { cache: "domains" })).toBeGreaterThanOrEqual(1)
        expect(valueOf(after, "redirect_cache_bytes", { cache: "links" })).toBeGreaterThan(0)
        expect(promLint(yield* scrapeText)).toEqual([])
      })
    )

    it.effect("each thread's CPU time and run-queue wait: counters that grow, on Linux only", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        yield* newLink(user, domain.id, { alias: "timed" })
        // Both threads report once a second: the scrape before has both labels.
        yield* Effect.sleep("1100 millis")
        const before = yield* scrape
        const started = performance.now()
        for (let n = 0; n < 50; n++) expect((yield* visit(domain.name, "/timed")).status).toBe(301)
        yield* Effect.sleep("1100 millis")
        const after = yield* scrape
        const wall = (performance.now() - started) / 1000
        for (const name of THREAD_TIME) {
          if (process.platform !== "linux") {
            expect(samplesOf(after, name), name).toEqual([])
            continue
          }
          expect(samplesOf(after, name).map((sample) => sample.labels.thread).sort(), name).toEqual(["clicks", "redirect"])
          for (const thread of ["redirect", "clicks"]) {
            const grew = valueOf(after, name, { thread }) - valueOf(before, name, { thread })
            if (name === "thread_cpu_seconds_total") {
              expect(grew, `${name} ${thread}`).toBeGreaterThan(0)
              // One thread's time, not the process's: at most the wall time between the two readings (each up to a second before its scrape)
              expect(grew, `${name} ${thread}`).toBeLessThan(wall + 1.5)
            } else {
              expect(grew, `${name} ${thread}`).toBeGreaterThanOrEqual(0)
            }
          }
        }
        expect(promLint(yield* scrapeText)).toEqual([])
      })
    )

    it.effect("/metrics and the documentation are the API host's: on a short domain they are paths like any other", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const plain = yield* newShortDomain(user)
        const withPage = yield* newShortDomain(user, { url_404: "https://example.com/missing" })
        const pages = ["/metrics", "/api/docs", "/api/v3/docs", "/api/v4/openapi.json", "/api/v3/openapi.json"]
        for (const path of pages) {
          const api = yield* call("GET", path)
          expect(api.status, path).toBe(200)
          const bare = yield* visit(plain.name, path)
          expect(bare.status, path).toBe(404)
          expect(bare.text, path).toBe("Not Found\n")
          const redirected = yield* visit(withPage.name, path)
          expect([redirected.status, redirected.headers["location"]], path).toEqual([302, "https://example.com/missing"])
        }
        for (const path of ["/healthz", "/readyz"]) expect((yield* visit(plain.name, path)).status, path).toBe(200)
        const api = yield* visit(plain.name, "/api/v4/error_codes")
        expect(api.status).toBe(401)
      })
    )
  })

  layer(TestServer({ METRICS_TOKEN: "scrape-secret" }), { excludeTestServices: true })("with METRICS_TOKEN", (it) => {
    it.effect("with METRICS_TOKEN set, answers only its bearer: 401 10000 otherwise", () =>
      Effect.gen(function* () {
        for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: "Bearer scrape-secret2" }, { authorization: "scrape-secret" }]) {
          const reply = yield* call("GET", "/metrics", { headers })
          expect(reply.status, JSON.stringify(headers)).toBe(401)
          expect(reply.body).toEqual({ errors: [{ code: 10000, message: "invalid token" }] })
        }
        const allowed = yield* call("GET", "/metrics", { headers: { authorization: "Bearer scrape-secret" } })
        expect(allowed.status).toBe(200)
        expect(promLint(allowed.text)).toEqual([])
        expect((yield* call("GET", "/healthz")).status).toBe(200)
      })
    )
  })

  layer(TestServer({ RATE_LIMIT_PER_SECOND: "2" }), { excludeTestServices: true })("under a rate limit", (it) => {
    it.effect("503 answers are counted by reason: rate limited, stopping", () =>
      Effect.gen(function* () {
        const before = yield* scrape
        const replies = yield* Effect.all([1, 2, 3, 4, 5].map(() => call("GET", "/api/v4/error_codes")))
        const limited = replies.filter((reply) => reply.status === 503).length
        expect(limited).toBeGreaterThan(0)
        const shutdown = yield* Shutdown
        shutdown.request()
        const ready = yield* call("GET", "/readyz")
        expect(ready.status).toBe(503)
        const after = yield* scrape
        const delta = (reason: string) => valueOf(after, "http_unavailable_total", { reason }) - valueOf(before, "http_unavailable_total", { reason })
        expect([delta("rate_limited"), delta("stopping"), delta("database_unavailable"), delta("overloaded")]).toEqual([limited, 1, 0, 0])
      })
    )
  })
})
