import { SqlClient } from "@effect/sql"
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { ClickLog } from "../src/Clicks/ClickLog.ts"
import { serverClientLayer } from "../src/Sql/Database.ts"
import { DatabaseLink, BreakableServer } from "./support/BreakableServer.ts"
import { newLink } from "./support/Fixtures.ts"
import { call, newUser, numberAt, timed, within } from "./support/Http.ts"
import { clicksOf, newShortDomain, visit } from "./support/Redirects.ts"
import { exitWithin, removeTempDirs, type ServiceProcess } from "./support/ServiceProcess.ts"
import { testServerUrl } from "./support/TestDatabase.ts"
import { TestServer } from "./support/TestServer.ts"
import { on, twoInstances } from "./support/TwoInstances.ts"
import { describeUnless, withoutServer } from "./support/SkipReasons.ts"

afterAll(removeTempDirs)


/** A user, a short domain and its links "steady" (`id`, to be cached) and "cold" (never visited). */
const steadyAndCold = Effect.gen(function* () {
  const user = yield* newUser()
  const domain = yield* newShortDomain(user)
  const id = yield* newLink(user, domain.id, { alias: "steady" })
  yield* newLink(user, domain.id, { alias: "cold" })
  // Every listening connection hears each insert; a late copy would evict an entry cached after this.
  yield* Effect.sleep("500 millis")
  return { user, domain, id }
})

describe("redirects when the database stops answering", () => {
  layer(BreakableServer(), { excludeTestServices: true })((it) => {
    it.effect("cached links keep redirecting, uncached ones get 503 fast, and every answered click is stored once", () =>
      Effect.gen(function* () {
        const { domain, id } = yield* steadyAndCold
        let answered = 0
        const hit = Effect.map(visit(domain.name, "/steady"), (reply) => {
          if (reply.status === 301) answered++
          return reply.status
        })
        for (let n = 0; n < 5; n++) expect(yield* hit).toBe(301)
        const link = yield* DatabaseLink
        yield* link.cut
        for (let n = 0; n < 20; n++) expect(yield* hit).toBe(301)
        const cold = yield* visit(domain.name, "/cold")
        expect(cold.status).toBe(503)
        expect(cold.ms).toBeLessThan(3000)
        yield* (yield* ClickLog).flush
        yield* Effect.sleep("1200 millis")
        for (let n = 0; n < 5; n++) expect(yield* hit).toBe(301)
        yield* link.restore
        // The first flushes after the cut may still meet dead pooled connections and spill again.
        const stored = clicksOf(id).pipe(
          Effect.map((clicks) => clicks.length === answered),
          Effect.orElseSucceed(() => false)
        )
        expect(yield* within(10_000, stored)).toBeLessThan(10_000)
        expect(answered).toBe(30)
        const metrics = yield* call("GET", "/metrics")
        expect(metrics.text).toMatch(/clicks_spilled_total [1-9]/)
        expect(metrics.text).toMatch(/clicks_replayed_total [1-9]/)
      })
    )
  })
})

describe("a connection lost inside a click batch's transaction", () => {
  layer(BreakableServer(), { excludeTestServices: true })((it) => {
    describeUnless(withoutServer("another session locks the link's row while the batch waits"), "on a PostgreSQL server", () => {
      it.scoped(
        "the batch is spilled, the writer goes on, and every click is stored once",
        () =>
          Effect.gen(function* () {
            const { domain, id } = yield* steadyAndCold
            const link = yield* DatabaseLink
            let answered = 0
            const hit = Effect.map(visit(domain.name, "/steady"), (reply) => {
              if (reply.status === 301) answered++
            })
            // Another session holds the link's row, so the batch stops inside its transaction, at the
            // update of the link's click count, until the connection is cut under it.
            const direct = yield* Effect.acquireRelease(
              Effect.promise(async () => {
                const client = new pg.Client(link.directUrl)
                client.on("error", () => undefined)
                await client.connect()
                return client
              }),
              (client) => Effect.promise(() => client.end())
            )
            const query = (text: string, values: ReadonlyArray<unknown> = []) =>
              Effect.promise(() => direct.query<{ n: number }>(text, [...values]))
            yield* query("BEGIN")
            yield* query("SELECT 1 FROM links WHERE id = $1 FOR UPDATE", [id])
            for (let n = 0; n < 10; n++) yield* hit
            const flushing = yield* Effect.fork((yield* ClickLog).flush)
            // Inside a transaction pg_stat_activity is a snapshot taken at its first read: cleared at each.
            const waiting = Effect.map(
              Effect.zipRight(
                query("SELECT pg_stat_clear_snapshot()"),
                query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
              ),
              (result) => (result.rows[0]?.n ?? 0) > 0
            )
            expect(yield* within(5000, waiting)).toBeLessThan(5000)
            yield* link.cut
            yield* query("ROLLBACK")
            yield* Fiber.join(flushing)
            expect((yield* call("GET", "/metrics")).text).toMatch(/clicks_spilled_total [1-9]/)
            yield* link.restore
            // Clicks made now are written by the writer's own schedule: it must have survived.
            for (let n = 0; n < 5; n++) yield* hit
            const stored = clicksOf(id).pipe(
              Effect.map((clicks) => clicks.length === answered),
              Effect.orElseSucceed(() => false)
            )
            expect(yield* within(10_000, stored)).toBeLessThan(10_000)
            expect(answered).toBe(15)
            // Counted once too, in the link and in its rollups.
            const sql = yield* SqlClient.SqlClient
            const [counts] = yield* sql<{ clicks: number; days: number }>`
              SELECT l.click_count AS clicks,
                     (SELECT sum(clicks)::int FROM click_rollups WHERE link_id = l.id AND kind = 'd') AS days
              FROM links l WHERE l.id = ${id}`
            expect(counts).toEqual({ clicks: 15, days: 15 })
          })
      )
    })
  })
})

// PGlite's socket server waits for the silent connection's transaction to end before it serves any
// other: every connection stops with it. The embedded database has no network path to lose.
describeUnless(withoutServer("a network path to the database; the embedded database has none"), "a database behind a network partition (packets dropped, not refused)", () => {
  layer(BreakableServer({ API_DEADLINE_SECONDS: "2" }), { excludeTestServices: true })((it) => {
    it.effect("the API answers 503 10902 by its deadline, cached links keep redirecting, and all recovers with the network", () =>
      Effect.gen(function* () {
        const { user, domain, id } = yield* steadyAndCold
        for (let n = 0; n < 3; n++) expect((yield* visit(domain.name, "/steady")).status).toBe(301)
        const link = yield* DatabaseLink
        yield* link.blackhole
        const api = () => call("GET", "/api/v4/domains", { token: user.token })
        const [first, second] = yield* Effect.all([timed(api()), timed(api())], { concurrency: "unbounded" })
        for (const [reply, ms] of [first, second]) {
          expect(reply.status).toBe(503)
          expect(numberAt(reply.body, "errors", 0, "code")).toBe(10902)
          expect(ms).toBeLessThan(4000)
        }
        for (let n = 0; n < 3; n++) expect((yield* visit(domain.name, "/steady")).status).toBe(301)
        const cold = yield* visit(domain.name, "/cold")
        expect(cold.status).toBe(503)
        expect(cold.ms).toBeLessThan(3000)
        // The click writer gives up on the silent database after its 5 s write timeout and spills.
        const spilled = Effect.map(call("GET", "/metrics"), (reply) => /clicks_spilled_total [1-9]/.test(reply.text))
        expect(yield* within(12_000, spilled)).toBeLessThan(12_000)
        yield* link.restore
        const answers = Effect.map(api(), (reply) => reply.status === 200)
        expect(yield* within(10_000, answers)).toBeLessThan(10_000)
        expect((yield* visit(domain.name, "/cold")).status).toBe(301)
        const stored = clicksOf(id).pipe(
          Effect.map((clicks) => clicks.length === 6),
          Effect.orElseSucceed(() => false)
        )
        expect(yield* within(10_000, stored)).toBeLessThan(10_000)
      })
    )
  })
})

describe("spill files", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "links-spill-"))
  layer(TestServer({ DATA_DIR: dataDir }), { excludeTestServices: true })((it) => {
    it.effect("files left by a process that is gone are replayed, and a click in two files counts once", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const id = yield* newLink(user, domain.id, { alias: "spilled" })
        const rows = [0, 1, 2].map((n) => ({
          id: randomUUID(),
          at: new Date(Date.now() - 60_000 * (n + 1)).toISOString(),
          link_id: id,
          domain_id: domain.id,
          ip_hash: "00".repeat(16),
          country: null,
          region: null,
          city: null,
          device: "desktop",
          referrer: "direct",
          user_agent: "test",
          qr: false,
          bot: false
        }))
        const lines = rows.map((row) => JSON.stringify(row)).join("\n")
        mkdirSync(join(dataDir, "clicks"), { recursive: true })
        // Pids above the kernel's limit belong to no process; a cut-off last line is skipped.
        writeFileSync(join(dataDir, "clicks", "clicks-spill-99999999.ndjson"), `${lines}\n{"id":"cut`)
        writeFileSync(join(dataDir, "clicks", "clicks-spill-99999998.ndjson"), `${lines}\n`)
        yield* (yield* ClickLog).flush
        expect(yield* clicksOf(id)).toHaveLength(3)
        expect(readdirSync(join(dataDir, "clicks"))).toEqual([])
        const reply = yield* call("GET", `/api/v4/${domain.id}/links/${id}`, { token: user.token })
        expect(numberAt(reply.body, "objects", 0, "click_count")).toBe(3)
      })
    )
  })
})

describe("two instances on one database", () => {
  describeUnless(withoutServer("two instances share one database"), "on a PostgreSQL server", () => {
    it.scopedLive(
      "a change on one is seen by the other within a second; SIGTERM writes every click before exit",
      () =>
        Effect.gen(function* () {
          const { url, a, b, token } = yield* twoInstances(testServerUrl!, "links_two")
          const domain = yield* call("POST", "/api/v4/domains", { token, body: { domain: "two.example" } }).pipe(on(a))
          const domainId = numberAt(domain.body, "objects", 0, "id")
          let answered = 0
          const locationOn = (service: ServiceProcess, path: string) =>
            Effect.map(visit("two.example", path).pipe(on(service)), (reply) => {
              if (reply.status === 301) answered++
              return reply.headers.location
            })

          expect(yield* within(1000, Effect.map(visit("two.example", "/").pipe(on(b)), (r) => r.status === 404))).toBeLessThan(1000)
          expect(yield* locationOn(b, "/shared")).toBeUndefined()
          const created = yield* call("POST", `/api/v4/${domainId}/links`, {
            token,
            body: { url: "https://example.com/one", alias: "shared", override_404_check: 1 }
          }).pipe(on(a))
          const linkId = numberAt(created.body, "objects", 0, "id")
          const seen = (location: string | undefined) => Effect.map(locationOn(b, "/shared"), (l) => l === location)
          expect(yield* within(1000, seen("https://example.com/one"))).toBeLessThan(1000)
          for (let n = 0; n < 10; n++) yield* locationOn(b, "/shared")
          for (let n = 0; n < 10; n++) yield* locationOn(a, "/shared")

          const patch = yield* call("PATCH", `/api/v4/${domainId}/links/${linkId}`, {
            token,
            body: [{ op: "replace", path: "/url", value: "https://example.com/two" }]
          }).pipe(on(a))
          expect(patch.status).toBe(200)
          expect(yield* within(1000, seen("https://example.com/two"))).toBeLessThan(1000)

          const database = yield* Layer.build(serverClientLayer(Redacted.make(url), { maxConnections: 1 }))
          const sql = yield* Effect.provide(SqlClient.SqlClient, database)
          yield* sql`UPDATE links SET status = 'deleted' WHERE id = ${linkId}`
          expect(yield* within(1000, Effect.map(visit("two.example", "/shared").pipe(on(b)), (r) => r.status === 404))).toBeLessThan(1000)

          // The caller's view of a domain is cached too: a domain disabled elsewhere refuses new links within a second.
          const createOnB = call("POST", `/api/v4/${domainId}/links`, {
            token,
            body: { url: "https://example.com/three", override_404_check: 1 }
          }).pipe(on(b))
          expect((yield* createOnB).status).toBe(200)
          yield* sql`UPDATE domains SET status = 'disabled' WHERE id = ${domainId}`
          expect(yield* within(1000, Effect.map(createOnB, (reply) => reply.status === 404))).toBeLessThan(1000)

          // A domain deleted on one instance (D1) stops redirecting on the other within a second; its name
          // registered again redirects the new domain's links there.
          const gone = yield* call("POST", "/api/v4/domains", { token, body: { domain: "gone.example" } }).pipe(on(a))
          const goneId = numberAt(gone.body, "objects", 0, "id")
          yield* call("POST", `/api/v4/${goneId}/links`, { token, body: { url: "https://example.com/old", alias: "x", override_404_check: 1 } }).pipe(on(a))
          const goneOnB = Effect.map(visit("gone.example", "/x").pipe(on(b)), (reply) => [reply.status, reply.headers.location])
          expect(yield* within(1000, Effect.map(goneOnB, ([status]) => status === 301))).toBeLessThan(1000)
          expect((yield* call("DELETE", `/api/v4/domains/${goneId}`, { token }).pipe(on(a))).status).toBe(200)
          expect(yield* within(1000, Effect.map(goneOnB, ([status]) => status === 404))).toBeLessThan(1000)
          const reborn = yield* call("POST", "/api/v4/domains", { token, body: { domain: "gone.example" } }).pipe(on(b))
          const rebornId = numberAt(reborn.body, "objects", 0, "id")
          yield* call("POST", `/api/v4/${rebornId}/links`, { token, body: { url: "https://example.com/new", alias: "x", override_404_check: 1 } }).pipe(on(b))
          expect(yield* within(1000, Effect.map(visit("gone.example", "/x").pipe(on(a)), (reply) => reply.headers.location === "https://example.com/new"))).toBeLessThan(1000)

          // Token owners are cached too: a token expired elsewhere stops working within a second.
          const domains = call("GET", "/api/v4/domains", { token }).pipe(on(b))
          expect((yield* domains).status).toBe(200)
          yield* sql`UPDATE access_tokens SET expires = now() - interval '1 second'`
          expect(yield* within(1000, Effect.map(domains, (reply) => reply.status === 401))).toBeLessThan(1000)

          for (const service of [a, b]) {
            yield* service.kill("SIGTERM")
            expect(yield* exitWithin(service, 15_000)).toMatchObject({ code: 0 })
          }
          const [stored] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM clicks WHERE link_id = ${linkId}`
          expect(stored?.n).toBe(answered)
          expect(answered).toBeGreaterThan(20)
        }),
      120_000
    )
  })
})
