import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import pg from "pg"
import { Scheduler } from "../src/Links/Scheduler.ts"
import { ClickLimits, type ClickLimitsService, type Turn } from "../src/Redirect/ClickLimits.ts"
import { DatabasePool, serverClientLayer } from "../src/Sql/Database.ts"
import { migrate } from "../src/Sql/Migrator.ts"
import { newLink } from "./support/Fixtures.ts"
import { call, newUser, numberAt, stringAt, type TestUser } from "./support/Http.ts"
import { parseExposition, valueOf } from "./support/Prometheus.ts"
import { randomClient, redisReachable, testRedisUrl } from "./support/RateWindow.ts"
import { newShortDomain, visit } from "./support/Redirects.ts"
import { FACEBOOK, FIREFOX, putSettings } from "./support/SmartLinks.ts"
import { makeTestDatabase, scopedServerDatabase, testServerUrl } from "./support/TestDatabase.ts"
import { BaseUrl, TestServer, TestServerOn } from "./support/TestServer.ts"
import { describeUnless, withoutRedis, withoutServer } from "./support/SkipReasons.ts"

const DESTINATION = "https://dest.example/offer"
const EXPIRED = "https://dest.example/sold-out"

class SecondInstance extends Context.Tag("test/SecondInstance")<SecondInstance, string>() {}

/** Two whole instances over one new database (the second built after the first has migrated it). */
const twoInstances = (env: Record<string, string>) =>
  Layer.unwrapScoped(
    Effect.map(scopedServerDatabase(testServerUrl!, "links_limits"), ({ url }) => {
      const database = () => serverClientLayer(Redacted.make(url), { maxConnections: 10, applicationName: "links-test" })
      const second = Layer.scoped(SecondInstance, Effect.map(Layer.build(TestServerOn(database(), env)), Context.get(BaseUrl)))
      return Layer.provideMerge(second, TestServerOn(database(), env))
    })
  )

const onSecond = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SecondInstance, (url) => Effect.provideService(effect, BaseUrl, url))

const human = () => ({ "user-agent": FIREFOX, "x-forwarded-for": randomClient() })

const linkOf = (user: TestUser, domainId: number, linkId: number) =>
  Effect.map(call("GET", `/api/v4/${domainId}/links/${linkId}`, { token: user.token }), (reply) => ({
    status: stringAt(reply.body, "objects", 0, "status"),
    modified: numberAt(reply.body, "objects", 0, "modified")
  }))

/** `visitors` human GETs at once, alternating between the instances: how many reached the destination, and where the rest went. */
const rush = (host: string, path: string, visitors: number) =>
  Effect.map(
    Effect.all(
      Array.from({ length: visitors }, (_, i) => {
        const request = visit(host, path, { headers: human() })
        return i % 2 === 0 ? request : onSecond(request)
      }),
      { concurrency: "unbounded" }
    ),
    (replies) => ({
      reached: replies.filter((reply) => reply.status === 301 && reply.headers.location === DESTINATION).length,
      others: [...new Set(replies.filter((reply) => reply.headers.location !== DESTINATION).map((reply) => `${reply.status} ${reply.headers.location}`))]
    })
  )

const exactlyAcrossInstances = Effect.gen(function* () {
  const user = yield* newUser()
  const domain = yield* newShortDomain(user)
  const alias = `limited${Date.now().toString(36)}`
  const id = yield* newLink(user, domain.id, { url: DESTINATION, alias })
  yield* putSettings(user, domain.id, id, { max_clicks: 25, expired_url: EXPIRED })
  const before = yield* linkOf(user, domain.id, id)
  // `modified` is in whole seconds.
  yield* Effect.sleep(1100)
  const { reached, others } = yield* rush(domain.name, `/${alias}`, 120)
  expect(reached).toBe(25)
  expect(others).toEqual([`302 ${EXPIRED}`])
  const after = yield* linkOf(user, domain.id, id)
  expect(after.status).toBe("archived")
  expect(after.modified).toBeGreaterThan(before.modified)
  const late = yield* onSecond(visit(domain.name, `/${alias}`, { headers: human() }))
  expect([late.status, late.headers.location]).toEqual([302, EXPIRED])
})

const notCounted = Effect.gen(function* () {
  const user = yield* newUser()
  const domain = yield* newShortDomain(user, { homepage: "https://home.example/" })
  const alias = `few${Date.now().toString(36)}`
  const id = yield* newLink(user, domain.id, { url: DESTINATION, alias })
  yield* putSettings(user, domain.id, id, { max_clicks: 2 })
  for (let i = 0; i < 3; i++) {
    expect((yield* visit(domain.name, `/${alias}`, { method: "HEAD", headers: human() })).status).toBe(301)
    expect((yield* visit(domain.name, `/${alias}`, { headers: { "user-agent": FACEBOOK } })).headers.location).toBe(DESTINATION)
  }
  expect((yield* visit(domain.name, `/${alias}`, { headers: human() })).headers.location).toBe(DESTINATION)
  expect((yield* onSecond(visit(domain.name, `/${alias}`, { headers: human() }))).headers.location).toBe(DESTINATION)
  const third = yield* visit(domain.name, `/${alias}`, { headers: human() })
  expect([third.status, third.headers.location]).toEqual([302, "https://home.example/"])
})

const redisUp = await redisReachable(testRedisUrl)

describeUnless(withoutServer("two instances share one database"), "max_clicks across two instances counted in PostgreSQL", () => {
  layer(twoInstances({ TRUST_PROXY: "127.0.0.1" }), { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("120 concurrent visitors of a link limited to 25: exactly 25 reach it, the rest its expired_url; the link is archived", () => exactlyAcrossInstances)
    it.effect("HEAD and bots do not count", () => notCounted)
  })
})

describeUnless(withoutServer("two instances share one database") ?? withoutRedis(redisUp, "the instances count in Redis"), "max_clicks across two instances counted in Redis", () => {
  layer(twoInstances({ TRUST_PROXY: "127.0.0.1", REDIS_URL: testRedisUrl }), { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("120 concurrent visitors of a link limited to 25: exactly 25 reach it, the rest its expired_url; the link is archived", () => exactlyAcrossInstances)
    it.effect("HEAD and bots do not count", () => notCounted)
  })
})

/** `n` takes at once of a limit of `max` through `limits`: the turns they got. */
const takeAtOnce = (limits: ClickLimitsService, linkId: number, n: number, max = 25) =>
  Effect.promise(() => Promise.all(Array.from({ length: n }, () => limits.take(linkId, max))))

const tally = (turns: ReadonlyArray<Turn>) => ({
  allowed: turns.filter((turn) => turn === "allowed").length,
  last: turns.filter((turn) => turn === "last").length,
  exhausted: turns.filter((turn) => turn === "exhausted").length
})

/** The counters' round trips, the visits they counted and those that waited for a round trip so far, from this process's /metrics. */
const roundTrips = Effect.map(call("GET", "/metrics"), (reply) => {
  const exposition = parseExposition(reply.text)
  return {
    trips: valueOf(exposition, "click_limit_round_trips_total"),
    visits: valueOf(exposition, "click_limit_visits_total"),
    waits: valueOf(exposition, "click_limit_waits_total")
  }
})

const built = (limits: Layer.Layer<ClickLimits, never, DatabasePool>) => Effect.map(Layer.build(limits), Context.get(ClickLimits))

/** The PostgreSQL counter and, when Redis is up, the Redis one, each with a new link. */
const eachCounter = Effect.gen(function* () {
  const user = yield* newUser()
  const domain = yield* newShortDomain(user)
  const counters = [yield* built(ClickLimits.layerDatabase)]
  if (redisUp) counters.push(yield* built(ClickLimits.layerRedis(Redacted.make(testRedisUrl))))
  const linked: Array<readonly [ClickLimitsService, number]> = []
  for (const limits of counters) linked.push([limits, yield* newLink(user, domain.id)] as const)
  return linked
})

describeUnless(withoutRedis(redisUp, "the counters count in Redis"), "click counters in a Redis shared by two deployments", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("keep apart the same link id of two databases (embedded databases are all named postgres)", () =>
      Effect.gen(function* () {
        const id = yield* freshLink
        const here = yield* built(ClickLimits.layerRedis(Redacted.make(testRedisUrl)))
        expect(yield* Effect.promise(() => here.take(id, 1))).toBe("last")
        const elsewhere = yield* Layer.build(makeTestDatabase())
        yield* Effect.provide(migrate, elsewhere)
        const there = yield* Effect.provide(built(ClickLimits.layerRedis(Redacted.make(testRedisUrl))), elsewhere)
        expect(yield* Effect.promise(() => there.take(id, 1))).toBe("last")
      }).pipe(Effect.scoped)
    )
  })
})

/** `visits` takes through `limits`, `perMs` every millisecond or so, spread over the turns of the event loop: the turns they got. */
const streamOf = (limits: ClickLimitsService, id: number, visits: number, max: number, perMs = 8) =>
  Effect.promise(async () => {
    const turns: Array<Promise<Turn>> = []
    const started = performance.now()
    while (turns.length < visits) {
      const due = Math.min(visits, perMs + Math.floor((performance.now() - started) * perMs))
      while (turns.length < due) turns.push(limits.take(id, max))
      await new Promise((resolve) => setImmediate(resolve))
    }
    return Promise.all(turns)
  })

/** A new link of a new user's new domain. */
const freshLink = Effect.gen(function* () {
  const user = yield* newUser()
  return yield* newLink(user, (yield* newShortDomain(user)).id)
})

/** Closes the pool's idle connection: the next statement opens another (on the embedded database, into the same session). */
const reconnect = Effect.flatMap(DatabasePool, ({ pool }) => Effect.promise(() => pool.connect().then((client) => client.release(true))))

describe("click counters", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("count and redirect through any connection: after the pool reconnects, and through a second pool on the same database", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const limits = yield* built(ClickLimits.layerDatabase)
        const [first, second, third] = [yield* newLink(user, domain.id, { alias: "first" }), yield* newLink(user, domain.id, { alias: "second" }), yield* newLink(user, domain.id)]
        expect(yield* Effect.promise(() => limits.take(first, 1))).toBe("last")
        expect((yield* visit(domain.name, "/first", { headers: human() })).status).toBe(301)
        yield* reconnect
        expect(yield* Effect.promise(() => limits.take(second, 1))).toBe("last")
        expect((yield* visit(domain.name, "/second", { headers: human() })).status).toBe(301)
        const shared = yield* DatabasePool
        const { threadConnections: _, copyFromStdin: __, ...config } = shared.connection
        const own = yield* Effect.acquireRelease(
          Effect.sync(() => new pg.Pool({ ...config, max: 1 })),
          (pool) => Effect.promise(() => pool.end())
        )
        const other = yield* built(Layer.provide(ClickLimits.layerDatabase, Layer.succeed(DatabasePool, { ...shared, pool: own })))
        expect(tally(yield* takeAtOnce(other, third, 3, 2))).toEqual({ allowed: 1, last: 1, exhausted: 1 })
      }).pipe(Effect.scoped)
    )

    it.effect("200 takes at once of a limit of 25 are counted by one round trip that grants 25 of them: 24 allowed and one last, in PostgreSQL and in Redis", () =>
      Effect.gen(function* () {
        for (const [limits, id] of yield* eachCounter) {
          const before = yield* roundTrips
          expect(tally(yield* takeAtOnce(limits, id, 200))).toEqual({ allowed: 24, last: 1, exhausted: 175 })
          const after = yield* roundTrips
          expect([after.trips - before.trips, after.visits - before.visits]).toEqual([1, 200])
          expect((yield* Effect.promise(() => limits.take(id, 25)))).toBe("exhausted")
        }
      }).pipe(Effect.scoped)
    )

    it.effect("two counters (as two instances) grouping visits at the edge of the limit grant exactly what is left, in PostgreSQL and in Redis", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const stores = [[yield* built(ClickLimits.layerDatabase), yield* built(ClickLimits.layerDatabase)]]
        if (redisUp) stores.push([yield* built(ClickLimits.layerRedis(Redacted.make(testRedisUrl))), yield* built(ClickLimits.layerRedis(Redacted.make(testRedisUrl)))])
        for (const [a, b] of stores) {
          const id = yield* newLink(user, domain.id)
          expect(tally(yield* takeAtOnce(a!, id, 20))).toEqual({ allowed: 20, last: 0, exhausted: 0 })
          // 5 turns left; each counter asks for 4 in one round trip: one gets 4, the other 1 of its 4.
          const before = yield* roundTrips
          const [first, second] = yield* Effect.all([takeAtOnce(a!, id, 4), takeAtOnce(b!, id, 4)], { concurrency: 2 })
          expect((yield* roundTrips).trips - before.trips).toBe(2)
          expect(tally([...first, ...second])).toEqual({ allowed: 4, last: 1, exhausted: 3 })
          expect([tally(first).exhausted, tally(second).exhausted].sort()).toEqual([0, 3])
          expect(tally(yield* takeAtOnce(b!, id, 3))).toEqual({ allowed: 0, last: 0, exhausted: 3 })
        }
        // Grouped takes of three links at once by both counters: 24 allowed and one last each.
        const [inDatabase, other] = stores[0]!
        const ids = [yield* newLink(user, domain.id), yield* newLink(user, domain.id), yield* newLink(user, domain.id)]
        const turns = yield* Effect.promise(() =>
          Promise.all(Array.from({ length: 240 }, (_, i) => (i % 2 === 0 ? inDatabase! : other!).take(ids[i % 3]!, 25).then((turn) => [ids[i % 3]!, turn] as const)))
        )
        for (const id of ids) {
          expect(tally(turns.filter(([link]) => link === id).map(([, turn]) => turn)), `link ${id}`).toEqual({ allowed: 24, last: 1, exhausted: 55 })
        }
      }).pipe(Effect.scoped)
    )

    it.effect("a link far from its limit is answered from a lease: a first visit's round trip lends a block that answers the next visits without one", () =>
      Effect.gen(function* () {
        const limits = yield* built(ClickLimits.layerDatabase)
        const id = yield* freshLink
        const before = yield* roundTrips
        expect(yield* Effect.promise(() => limits.take(id, 1_000_000))).toBe("allowed")
        const lent = yield* roundTrips
        expect([lent.trips - before.trips, lent.visits - before.visits, lent.waits - before.waits]).toEqual([1, 1, 1])
        // The first block is 64: the next 30 are answered from it, with no round trip at all.
        expect(tally(yield* takeAtOnce(limits, id, 30, 1_000_000))).toEqual({ allowed: 30, last: 0, exhausted: 0 })
        const local = yield* roundTrips
        expect([local.trips - lent.trips, local.visits - lent.visits, local.waits - lent.waits]).toEqual([0, 30, 0])
        // A stream of 10 visits a millisecond: blocks sized to the rate, a few round trips in all.
        expect(tally(yield* streamOf(limits, id, 1000, 1_000_000, 10)).allowed).toBe(1000)
        const streamed = yield* roundTrips
        expect(streamed.visits - local.visits).toBe(1000)
        expect(streamed.trips - local.trips).toBeLessThanOrEqual(50)
      }).pipe(Effect.scoped)
    )
  })
})

/** The link's row and leases, as PostgreSQL has them. */
const rowOf = (id: number) =>
  Effect.flatMap(DatabasePool, ({ pool }) =>
    Effect.promise(async () => {
      const row = await pool.query<{ used: string; leased: string }>("SELECT used::text, leased::text FROM link_limits WHERE link_id = $1", [id])
      const leases = await pool.query<{ slots: string }>("SELECT slots::text FROM link_limit_leases WHERE link_id = $1", [id])
      return { used: Number(row.rows[0]!.used), leased: Number(row.rows[0]!.leased), leases: leases.rows.map(({ slots }) => Number(slots)) }
    })
  )

const statusOf = (id: number) =>
  Effect.flatMap(DatabasePool, ({ pool }) =>
    Effect.promise(async () => (await pool.query<{ status: string }>("SELECT status FROM links WHERE id = $1", [id])).rows[0]!.status)
  )

describe("click leases", () => {
  layer(TestServer(), { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("after idleMs without visits a lease is cut to a reserve of a quarter of its block, renewed until forgetMs, then given back; all go back when the counter stops; used counts exactly the visits answered", () =>
      Effect.gen(function* () {
        const id = yield* freshLink
        const times = { leaseMs: 1000, idleMs: 200, forgetMs: 2500 }
        yield* Effect.scoped(
          Effect.gen(function* () {
            const limits = yield* built(ClickLimits.layerDatabaseWith(times))
            expect(tally(yield* takeAtOnce(limits, id, 3, 1_000_000)).allowed).toBe(3)
            const visited = performance.now()
            expect(yield* rowOf(id)).toEqual({ used: 3, leased: 64, leases: [64] })
            yield* Effect.sleep(400)
            expect(yield* rowOf(id)).toEqual({ used: 3, leased: 16, leases: [16] })
            // Past the lease's life (1 s) the reserve is still there: renewed halfway through it.
            yield* Effect.sleep(1600)
            expect(yield* rowOf(id)).toEqual({ used: 3, leased: 16, leases: [16] })
            const expiry = yield* Effect.flatMap(DatabasePool, ({ pool }) =>
              Effect.promise(() => pool.query<{ left: number }>("SELECT extract(epoch FROM expires_at - now()) * 1000 AS left FROM link_limit_leases WHERE link_id = $1", [id]))
            )
            expect(Number(expiry.rows[0]!.left)).toBeGreaterThan(0)
            yield* Effect.sleep(Math.max(0, visited + times.forgetMs + 400 - performance.now()))
            expect(yield* rowOf(id)).toEqual({ used: 3, leased: 0, leases: [] })
            expect(tally(yield* takeAtOnce(limits, id, 5, 1_000_000)).allowed).toBe(5)
            expect((yield* rowOf(id)).leased).toBeGreaterThan(0)
          })
        )
        expect(yield* rowOf(id)).toEqual({ used: 8, leased: 0, leases: [] })
      })
    )

    it.effect("a visit the lease holds a slot for is answered at once, without a promise; one past the lease waits for the round trip", () =>
      Effect.gen(function* () {
        const id = yield* freshLink
        const limits = yield* built(ClickLimits.layerDatabaseWith({ leaseMs: 10_000, idleMs: 5_000, forgetMs: 60_000 }))
        const first = limits.visit(id, 20)
        expect(first).toBeInstanceOf(Promise)
        expect(yield* Effect.promise(() => Promise.resolve(first))).toBe("allowed")
        // 19 left: an eighth is 2, less than a block: nothing was lent, every visit waits.
        expect(yield* rowOf(id)).toEqual({ used: 1, leased: 0, leases: [] })
        expect(limits.visit(id, 20)).toBeInstanceOf(Promise)
        const far = yield* freshLink
        expect(yield* Effect.promise(() => Promise.resolve(limits.visit(far, 1_000_000)))).toBe("allowed")
        const leased = (yield* rowOf(far)).leased
        expect(leased).toBe(64)
        const turns = Array.from({ length: leased }, () => limits.visit(far, 1_000_000))
        expect(turns.every((turn) => turn === "allowed")).toBe(true)
        expect(limits.visit(far, 1_000_000)).toBeInstanceOf(Promise)
      }).pipe(Effect.scoped)
    )

    it.effect("near its limit (an eighth of the room no lease holds less than a block) an idle link's lease goes back whole", () =>
      Effect.gen(function* () {
        const id = yield* freshLink
        const limits = yield* built(ClickLimits.layerDatabaseWith({ leaseMs: 10_000, idleMs: 200, forgetMs: 60_000 }))
        // 399 left: an eighth is 49, lent of the 64 asked; 350 free after, less than 8 blocks.
        expect(yield* Effect.promise(() => limits.take(id, 400))).toBe("allowed")
        expect(yield* rowOf(id)).toEqual({ used: 1, leased: 49, leases: [49] })
        yield* Effect.sleep(400)
        expect(yield* rowOf(id)).toEqual({ used: 1, leased: 0, leases: [] })
      }).pipe(Effect.scoped)
    )

    it.effect("at a steady rate no visit waits for a round trip after the first; nor does a burst after a pause longer than idleMs", () =>
      Effect.gen(function* () {
        const id = yield* freshLink
        const limits = yield* built(ClickLimits.layerDatabaseWith({ leaseMs: 10_000, idleMs: 200, forgetMs: 60_000 }))
        const before = yield* roundTrips
        expect(yield* Effect.promise(() => limits.take(id, 1_000_000))).toBe("allowed")
        const first = yield* roundTrips
        expect(first.waits - before.waits).toBe(1)
        // 300 visits a second for 2 s: the first block lasts about 200 ms, its top-up goes at half.
        expect(tally(yield* streamOf(limits, id, 600, 1_000_000, 0.3)).allowed).toBe(600)
        const streamed = yield* roundTrips
        expect([streamed.visits - first.visits, streamed.waits - first.waits]).toEqual([600, 0])
        yield* Effect.sleep(500)
        expect(tally(yield* takeAtOnce(limits, id, 40, 1_000_000)).allowed).toBe(40)
        const burst = yield* roundTrips
        expect([burst.visits - streamed.visits, burst.waits - streamed.waits]).toEqual([40, 0])
      }).pipe(Effect.scoped)
    )

    it.effect("top-ups of many links that fall due within milliseconds of each other, no visit waiting, share a round trip", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const ids: Array<number> = []
        for (let i = 0; i < 20; i++) ids.push(yield* newLink(user, domain.id))
        const limits = yield* built(ClickLimits.layerDatabaseWith({ leaseMs: 10_000, idleMs: 5_000, forgetMs: 60_000 }))
        // Every link's first visit, in one round trip: a first block of 64 each.
        yield* Effect.promise(() => Promise.all(ids.map((id) => limits.take(id, 1_000_000))))
        const before = yield* roundTrips
        // 33 more visits of each link in turn, a millisecond apart: 31 held, half the block spent, a top-up due.
        const started = performance.now()
        for (const id of ids) {
          expect(tally(yield* takeAtOnce(limits, id, 33, 1_000_000)).allowed).toBe(33)
          yield* Effect.sleep(1)
        }
        const spread = performance.now() - started
        yield* Effect.sleep(200)
        const after = yield* roundTrips
        expect(after.waits - before.waits).toBe(0)
        // A round trip for the top-ups due within each 25 ms (the counter's wait), however slow the
        // loop above was. Sent as each fell due, they took one each, or one for those due while one
        // was under way (11 here over about 30 ms).
        expect(after.trips - before.trips).toBeGreaterThan(0)
        expect(after.trips - before.trips).toBeLessThanOrEqual(Math.ceil(spread / 25) + 1)
        for (const id of ids) {
          const { leased, leases } = yield* rowOf(id)
          expect(leases).toEqual([leased])
        }
      }).pipe(Effect.scoped)
    )

    it.effect("two counters (as two instances) streaming visits of a link from far to near its limit: exactly max_clicks get a turn, and the last one archives the link", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const times = { leaseMs: 10_000, idleMs: 200, forgetMs: 60_000 }
        const a = yield* built(ClickLimits.layerDatabaseWith(times))
        const b = yield* built(ClickLimits.layerDatabaseWith(times))
        for (const max of [1000, 2000]) {
          const id = yield* newLink(user, domain.id)
          const before = yield* roundTrips
          const [first, second] = yield* Effect.all([streamOf(a, id, (max * 3) / 4, max), streamOf(b, id, (max * 3) / 4, max)], { concurrency: 2 })
          const turns = tally([...first, ...second])
          expect(turns.allowed + turns.last, `limit ${max}`).toBe(max)
          expect(turns.exhausted).toBe(max / 2)
          expect(turns.last).toBeLessThanOrEqual(1)
          expect(tally(first).exhausted + tally(second).exhausted).toBe(max / 2)
          // Leases answered most visits: far fewer round trips than the 1.5 x max visits (without
          // leases, about one trip per two, the streams' visits batched). Near the limit each trip
          // carries the visits that arrived during the last one, so a cheaper statement means more,
          // smaller trips: CI saw 508 for max 2000 once the statement lost its n² scan.
          expect((yield* roundTrips).trips - before.trips).toBeLessThan(max / 3)
          expect(yield* rowOf(id)).toEqual({ used: max, leased: 0, leases: [] })
          // The visit numbered max_clicks, when it went by a round trip, is `last` and its caller
          // archives the link; when the last slot was answered from a lease, the counter does.
          yield* Effect.sleep(100)
          expect(yield* statusOf(id)).toBe(turns.last === 1 ? "active" : "archived")
        }
      }).pipe(Effect.scoped)
    )

    describeUnless(withoutServer("another session locks the lease table; the embedded database has one session"), "on a PostgreSQL server", () => {
      it.effect("a statement that fails changes nothing: the visits answered from a lease are reported by the next one", () =>
        Effect.gen(function* () {
          const id = yield* freshLink
          const shared = yield* DatabasePool
          const { threadConnections: _, copyFromStdin: __, ...config } = shared.connection
          const own = yield* Effect.acquireRelease(
            Effect.sync(() => new pg.Pool({ ...config, max: 1, statement_timeout: 200 })),
            (pool) => Effect.promise(() => pool.end())
          )
          const limits = yield* built(Layer.provide(ClickLimits.layerDatabaseWith({ leaseMs: 10_000, idleMs: 300, forgetMs: 60_000 }), Layer.succeed(DatabasePool, { ...shared, pool: own })))
          expect(yield* Effect.promise(() => limits.take(id, 1_000_000))).toBe("allowed")
          expect(tally(yield* takeAtOnce(limits, id, 5, 1_000_000)).allowed).toBe(5)
          // The lease is cut to its reserve (16 of the block of 64) after 300 ms without visits; the lease
          // table locked for 800 ms makes that statement (and any retry meanwhile) time out.
          const locker = yield* Effect.acquireRelease(Effect.promise(() => shared.pool.connect()), (client) => Effect.sync(() => client.release()))
          yield* Effect.promise(() => locker.query("BEGIN; LOCK TABLE link_limit_leases IN ACCESS EXCLUSIVE MODE"))
          yield* Effect.sleep(800)
          yield* Effect.promise(() => locker.query("COMMIT"))
          yield* Effect.sleep(1500)
          expect(yield* rowOf(id)).toEqual({ used: 6, leased: 16, leases: [16] })
        }).pipe(Effect.scoped)
      )
    })

    it.effect("the lease of a counter that can no longer reach PostgreSQL (a crash, as the others see it) is taken back when it expires: the limit is still reached", () =>
      Effect.gen(function* () {
        const id = yield* freshLink
        const times = { leaseMs: 1000, idleMs: 10_000, forgetMs: 60_000 }
        const shared = yield* DatabasePool
        const { threadConnections: _, copyFromStdin: __, ...config } = shared.connection
        const own = new pg.Pool({ ...config, max: 1 })
        const crashed = yield* built(Layer.provide(ClickLimits.layerDatabaseWith(times), Layer.succeed(DatabasePool, { ...shared, pool: own })))
        const lentAt = performance.now()
        expect(yield* Effect.promise(() => crashed.take(id, 200))).toBe("allowed")
        const held = yield* rowOf(id)
        // The first block asked for is 64: an eighth of the 199 left is lent.
        expect(held.leased).toBe(24)
        yield* Effect.promise(() => own.end())
        const survivor = yield* built(ClickLimits.layerDatabaseWith(times))
        const started = performance.now()
        const turns = tally(yield* takeAtOnce(survivor, id, 200, 200))
        const waited = performance.now() - started
        expect(turns).toEqual({ allowed: 198, last: 1, exhausted: 1 })
        // The lease expires a second after the statement that lent it, sent after lentAt.
        expect(performance.now() - lentAt).toBeGreaterThanOrEqual(times.leaseMs)
        expect(waited).toBeLessThan(times.leaseMs + 500)
        expect(yield* rowOf(id)).toEqual({ used: 200, leased: 0, leases: [] })
      }).pipe(Effect.scoped)
    )
  })
})

describe("the counter's commit", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("goes without waiting for the disk in its own transaction only: its connection waits for the disk again afterwards", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const shared = yield* DatabasePool
        const { threadConnections: _, copyFromStdin: __, ...config } = shared.connection
        const single = yield* Effect.acquireRelease(
          Effect.sync(() => new pg.Pool({ ...config, max: 1 })),
          (pool) => Effect.promise(() => pool.end())
        )
        const setting = Effect.promise(() => single.query<{ synchronous_commit: string }>("SHOW synchronous_commit")).pipe(
          Effect.map(({ rows }) => rows[0]!.synchronous_commit)
        )
        const before = yield* setting
        const limits = yield* built(Layer.provide(ClickLimits.layerDatabase, Layer.succeed(DatabasePool, { ...shared, pool: single })))
        const id = yield* newLink(user, domain.id)
        expect(tally(yield* takeAtOnce(limits, id, 3))).toEqual({ allowed: 3, last: 0, exhausted: 0 })
        expect(yield* setting).toBe(before)
        expect(before).not.toBe("off")
      }).pipe(Effect.scoped)
    )
  })
})

describe("expires_at", () => {
  layer(TestServer({ TRUST_PROXY: "127.0.0.1" }), { excludeTestServices: true })((it) => {
    it.effect("a link redirects until expires_at, then goes to its expired_url (or the homepage) and is archived, visited or not", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user, { homepage: "https://home.example/" })
        const stamp = Date.now().toString(36)
        const visited = yield* newLink(user, domain.id, { url: DESTINATION, alias: `soon${stamp}` })
        const plain = yield* newLink(user, domain.id, { url: DESTINATION, alias: `plain${stamp}` })
        const unvisited = yield* newLink(user, domain.id, { url: DESTINATION, alias: `quiet${stamp}` })
        const at = Math.floor(Date.now() / 1000) + 2
        yield* putSettings(user, domain.id, visited, { expires_at: at, expired_url: EXPIRED })
        yield* putSettings(user, domain.id, plain, { expires_at: at })
        yield* putSettings(user, domain.id, unvisited, { expires_at: at })
        expect((yield* visit(domain.name, `/soon${stamp}`, { headers: human() })).headers.location).toBe(DESTINATION)
        yield* Effect.sleep(at * 1000 - Date.now() + 100)
        const late = yield* visit(domain.name, `/soon${stamp}`, { headers: human() })
        expect([late.status, late.headers.location]).toEqual([302, EXPIRED])
        const lateHome = yield* visit(domain.name, `/plain${stamp}`, { headers: human() })
        expect([lateHome.status, lateHome.headers.location]).toEqual([302, "https://home.example/"])
        yield* Effect.sleep(300)
        expect((yield* linkOf(user, domain.id, visited)).status).toBe("archived")
        yield* (yield* Scheduler).sweep
        expect((yield* linkOf(user, domain.id, unvisited)).status).toBe("archived")
      })
    )
  })
})
