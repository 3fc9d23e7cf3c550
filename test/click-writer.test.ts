// Also on a PostgreSQL server: clicks go in by binary COPY there, and batches commit side by side.
import { describe, expect, it, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Deferred, Effect, Exit, Fiber, Layer, Ref } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ClickRepo, type ClickRow } from "../src/Clicks/ClickRepo.ts"
import { giveUpAfter } from "../src/Clicks/ClickWriter.ts"
import { ClickBatch } from "../src/Clicks/ClickBatch.ts"
import { handOver, type RawClick } from "../src/Clicks/ClickHandover.ts"
import { makeClickWriter } from "../src/Clicks/ClickWriter.ts"
import { GeoIp } from "../src/Clicks/GeoIp.ts"
import { clickRow, type TestClick } from "./support/Clicks.ts"
import { newDomain, newLink } from "./support/Fixtures.ts"
import { newUser } from "./support/Http.ts"
import { TestServer } from "./support/TestServer.ts"

/** 2025-01-31T20:00:00Z: the clicks below cross a day and a month boundary. */
const T0 = 1_738_353_600

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
}

const PLACES = [
  { country: "US", region: "California", city: "Mountain View" },
  { country: "DE", region: "Berlin", city: "Berlin" },
  { country: "FR", region: "Île-de-France", city: "Paris" },
  { country: "XX", region: 'Quote " and \\ back\tslash', city: "Tab\there" },
  { country: null, region: null, city: null }
]
const DEVICES = ["desktop", "mobile", "tablet", "other"] as const
const REFERRERS = ["direct", "google.com", "t.co", "ex\\ample.org"]

const randomClicks = (seed: number, count: number, links: ReadonlyArray<number>, domainId: number) => {
  const next = random(seed)
  const pick = <A,>(items: ReadonlyArray<A>) => items[Math.floor(next() * items.length)]!
  return Array.from({ length: count }, (): TestClick => ({
    linkId: pick(links),
    domainId,
    at: T0 + Math.floor(next() * 10 * 3600),
    ip: String(Math.floor(next() * 12)),
    ...pick(PLACES),
    device: pick(DEVICES),
    referrer: pick(REFERRERS),
    qr: next() < 0.3,
    bot: next() < 0.15
  }))
}

const setup = Effect.gen(function* () {
  const admin = yield* newUser({ plan: "team" })
  const member = yield* newUser({ accountId: admin.accountId, role: "member" })
  const domainId = yield* newDomain(admin)
  const links = [
    yield* newLink(admin, domainId, { alias: "one" }),
    yield* newLink(admin, domainId, { alias: "two" }),
    yield* newLink(member, domainId, { alias: "three" })
  ]
  return { domainId, links }
})

const FACTS = `
  SELECT c.link_id, c.domain_id, l.user_id, (c.at AT TIME ZONE 'UTC')::date AS day,
         to_char(c.at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24') AS hour, c.qr, k.kind, k.value, k.region, k.city
  FROM clicks c JOIN links l ON l.id = c.link_id
  CROSS JOIN LATERAL (VALUES
    ('d'::"char", '', '', ''),
    ('g'::"char", coalesce(c.country, ''), coalesce(c.region, ''), coalesce(c.city, '')),
    ('v'::"char", c.device, '', ''),
    ('r'::"char", c.referrer, '', ''),
    ('h'::"char", to_char(c.at AT TIME ZONE 'UTC', 'HH24'), '', '')
  ) AS k(kind, value, region, city)
  WHERE NOT c.bot AND c.domain_id = $1`

/** Every table the click writer keeps, read back, beside the same figures computed from `clicks`. */
const stored = (domainId: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const query = (text: string) => sql.unsafe(text, [domainId])
    const pair = (kept: string, computed: string) =>
      Effect.map(Effect.all([query(kept), query(computed)]), ([actual, expected]) => ({ actual, expected }))
    return {
      perLink: yield* pair(
        `SELECT r.link_id, r.kind, r.day::text, r.value, r.region, r.city, r.clicks, r.scans FROM click_rollups r
         JOIN links l ON l.id = r.link_id WHERE l.domain_id = $1 ORDER BY 1, 2, 3, 4, 5, 6`,
        `SELECT link_id, kind, day::text, value, region, city, count(*)::int AS clicks,
           (count(*) FILTER (WHERE qr))::int AS scans
         FROM (${FACTS}) f GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6`
      ),
      perHour: yield* pair(
        `SELECT r.link_id, r.kind, to_char(r.hour AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24') AS hour, r.value, r.region, r.city,
           r.clicks, r.scans
         FROM click_rollups_hour r JOIN links l ON l.id = r.link_id WHERE l.domain_id = $1 ORDER BY 1, 2, 3, 4, 5, 6`,
        `SELECT link_id, kind, hour, value, region, city, count(*)::int AS clicks, (count(*) FILTER (WHERE qr))::int AS scans
         FROM (${FACTS}) f WHERE kind <> 'h' GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6`
      ),
      perUserHour: yield* pair(
        `SELECT user_id, kind, to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24') AS hour, value, region, city, clicks, scans
         FROM click_rollups_user_hour WHERE domain_id = $1 ORDER BY 1, 2, 3, 4, 5, 6`,
        `SELECT user_id, kind, hour, value, region, city, count(*)::int AS clicks, (count(*) FILTER (WHERE qr))::int AS scans
         FROM (${FACTS}) f WHERE kind <> 'h' GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6`
      ),
      perLinkMonth: yield* pair(
        `SELECT r.link_id, r.month::text, r.clicks, r.scans FROM click_rollups_link_month r
         JOIN links l ON l.id = r.link_id WHERE l.domain_id = $1 ORDER BY 1, 2`,
        `SELECT link_id, date_trunc('month', day)::date::text AS month, count(*)::int AS clicks,
           (count(*) FILTER (WHERE qr))::int AS scans
         FROM (${FACTS}) f WHERE kind = 'd' GROUP BY 1, 2 ORDER BY 1, 2`
      ),
      perUser: yield* pair(
        `SELECT user_id, kind, day::text, value, region, city, clicks, scans FROM click_rollups_user WHERE domain_id = $1
         ORDER BY 1, 2, 3, 4, 5, 6`,
        `SELECT user_id, kind, day::text, value, region, city, count(*)::int AS clicks,
           (count(*) FILTER (WHERE qr))::int AS scans
         FROM (${FACTS}) f WHERE kind <> 'h' GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6`
      ),
      perUserMonth: yield* pair(
        `SELECT user_id, kind, month::text, value, region, city, clicks, scans FROM click_rollups_user_month
         WHERE domain_id = $1 ORDER BY 1, 2, 3, 4, 5, 6`,
        `SELECT user_id, kind, date_trunc('month', day)::date::text AS month, value, region, city, count(*)::int AS clicks,
           (count(*) FILTER (WHERE qr))::int AS scans
         FROM (${FACTS}) f WHERE kind IN ('g', 'v', 'r') GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6`
      ),
      visitors: yield* pair(
        `SELECT v.link_id, encode(v.ip_hash, 'hex') AS ip FROM link_visitors v JOIN links l ON l.id = v.link_id
         WHERE l.domain_id = $1 ORDER BY 1, 2`,
        `SELECT DISTINCT c.link_id, encode(c.ip_hash, 'hex') AS ip FROM clicks c JOIN links l ON l.id = c.link_id
         WHERE NOT c.bot AND c.domain_id = $1 ORDER BY 1, 2`
      ),
      links: yield* pair(
        `SELECT id, click_count, last_clicked FROM links WHERE domain_id = $1 ORDER BY id`,
        `SELECT l.id, count(c.id) FILTER (WHERE NOT c.bot) AS click_count, max(c.at) FILTER (WHERE NOT c.bot) AS last_clicked
         FROM links l LEFT JOIN clicks c ON c.link_id = l.id WHERE l.domain_id = $1 GROUP BY l.id ORDER BY l.id`
      )
    }
  })

const expectConsistent = (domainId: number) =>
  Effect.gen(function* () {
    const tables = yield* stored(domainId)
    for (const [name, { actual, expected }] of Object.entries(tables)) {
      expect(actual.length, name).toBeGreaterThan(0)
      expect(actual, name).toEqual(expected)
    }
  })

const clickCount = (domainId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM clicks WHERE domain_id = ${domainId}`, ([row]) => row?.n)
  )

const nonBotPerLink = (rows: ReadonlyArray<ClickRow>) => {
  const counts = new Map<number, number>()
  for (const row of rows) if (!row.bot) counts.set(row.link_id, (counts.get(row.link_id) ?? 0) + 1)
  return [...counts].map(([linkId, clicks]) => ({ linkId, clicks })).sort((a, b) => a.linkId - b.linkId)
}

const byLink = <A extends { readonly linkId: number }>(rows: ReadonlyArray<A>) => [...rows].sort((a, b) => a.linkId - b.linkId)

describe("click writer: summed batches (insertFresh) and idempotent batches (insert)", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("a batch summed before writing leaves every rollup, count and visitor as computed from the clicks", () =>
      Effect.gen(function* () {
        const { domainId, links } = yield* setup
        const repo = yield* ClickRepo
        const rows = randomClicks(1, 6000, links, domainId).map(clickRow)
        // Added in slices as the click writer does: more than one INSERT statement.
        const large = new ClickBatch()
        for (let start = 0; start < 5400; start += 200) large.add(rows.slice(start, start + 200))
        expect(large.json().map((json) => (JSON.parse(json) as ReadonlyArray<unknown>).length)).toEqual([5000, 400])
        expect(byLink(yield* repo.insertFresh(large))).toEqual(nonBotPerLink(rows.slice(0, 5400)))
        for (let start = 5400; start < rows.length; start += 300) {
          const batch = rows.slice(start, start + 300)
          expect(byLink(yield* repo.insertFresh(ClickBatch.of(batch)))).toEqual(nonBotPerLink(batch))
        }
        expect(yield* clickCount(domainId)).toBe(6000)
        yield* expectConsistent(domainId)
      }).pipe(Effect.provide(ClickRepo.Default))
    )

    it.effect("summed and idempotent batches mixed give the same tables", () =>
      Effect.gen(function* () {
        const { domainId, links } = yield* setup
        const repo = yield* ClickRepo
        const rows = randomClicks(2, 700, links, domainId).map(clickRow)
        const sizes = [1, 50, 120, 7, 222, 300]
        let start = 0
        for (const [n, size] of sizes.entries()) {
          const batch = rows.slice(start, start + size)
          start += size
          const counted = n % 2 === 0 ? yield* repo.insertFresh(ClickBatch.of(batch)) : yield* repo.insert(batch)
          expect(byLink(counted)).toEqual(nonBotPerLink(batch))
        }
        expect(yield* clickCount(domainId)).toBe(700)
        yield* expectConsistent(domainId)
      }).pipe(Effect.provide(ClickRepo.Default))
    )

    it.effect("a summed batch holding a click already written writes nothing; the idempotent retry counts the rest once", () =>
      Effect.gen(function* () {
        const { domainId, links } = yield* setup
        const repo = yield* ClickRepo
        const rows = randomClicks(3, 400, links, domainId).map(clickRow)
        yield* repo.insertFresh(ClickBatch.of(rows.slice(0, 100)))
        const failed = yield* Effect.either(repo.insertFresh(ClickBatch.of(rows.slice(50, 400))))
        expect(failed._tag).toBe("Left")
        expect(yield* clickCount(domainId)).toBe(100)
        yield* expectConsistent(domainId)
        const retried = yield* repo.insert(rows.slice(50, 400))
        expect(byLink(retried)).toEqual(nonBotPerLink(rows.slice(100, 400)))
        expect(yield* clickCount(domainId)).toBe(400)
        yield* expectConsistent(domainId)
      }).pipe(Effect.provide(ClickRepo.Default))
    )

    it.effect("clicks of a link that no longer exists are stored but counted nowhere", () =>
      Effect.gen(function* () {
        const { domainId, links } = yield* setup
        const repo = yield* ClickRepo
        const missing = 2_000_000_000
        const rows = randomClicks(4, 60, [...links, missing], domainId).map(clickRow)
        const counted = yield* repo.insertFresh(ClickBatch.of(rows))
        expect(byLink(counted)).toEqual(nonBotPerLink(rows.filter((row) => row.link_id !== missing)))
        yield* expectConsistent(domainId)
      }).pipe(Effect.provide(ClickRepo.Default))
    )
  })
})

/** A webhook of the domain by SQL, whose clicks the running service's dispatcher never batches (clicks_batched in the future). */
const webhook = (domainId: number, events: ReadonlyArray<string>, active = true) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: number }>`
        INSERT INTO webhooks (domain_id, url, events, active, secret, clicks_batched)
        VALUES (${domainId}, 'http://127.0.0.1:9/hook', ${events}::text[], ${active}, '\\x00', 'infinity') RETURNING id`,
      ([row]) => row!.id
    )
  )

/** The clicks queued for the webhook, in queue order. */
const queuedFor = (webhookId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ click_id: string; at: string; bot: boolean; referrer: string }>`
      SELECT click_id::text, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, bot, referrer
      FROM webhook_clicks WHERE webhook_id = ${webhookId} ORDER BY id`
  )

describe("click writer: clicks queued for link.clicked webhooks", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("only the clicks of domains with an active webhook for link.clicked, each once per webhook in time order, fresh or replayed", () =>
      Effect.gen(function* () {
        const admin = yield* newUser({ plan: "team" })
        const hooked = yield* newDomain(admin)
        const quiet = yield* newDomain(admin)
        const hookedLinks = [yield* newLink(admin, hooked, { alias: "h1" }), yield* newLink(admin, hooked, { alias: "h2" })]
        const quietLinks = [yield* newLink(admin, quiet, { alias: "q1" })]
        const first = yield* webhook(hooked, ["link.clicked"])
        const second = yield* webhook(hooked, ["link.created", "link.clicked"])
        const others = [yield* webhook(hooked, ["link.clicked"], false), yield* webhook(hooked, ["link.created"]), yield* webhook(quiet, ["link.updated"])]
        const repo = yield* ClickRepo
        const quietRows = randomClicks(8, 100, quietLinks, quiet).map(clickRow)
        // Both domains' clicks in every batch.
        const rows = randomClicks(7, 300, hookedLinks, hooked)
          .map(clickRow)
          .flatMap((row, n) => (n < quietRows.length ? [row, quietRows[n]!] : [row]))
        const inTimeOrder = (chosen: ReadonlyArray<ClickRow>) =>
          [...chosen].sort((a, b) => (a.at === b.at ? (a.id < b.id ? -1 : 1) : a.at < b.at ? -1 : 1)).map((row) => row.id)
        const ofHooked = (chosen: ReadonlyArray<ClickRow>) => chosen.filter((row) => row.domain_id === hooked)

        // A fresh batch, then a replay holding part of it again and new clicks: the stored ones are not queued again.
        yield* repo.insertFresh(ClickBatch.of(rows.slice(0, 250)))
        expect((yield* queuedFor(first)).map((row) => row.click_id)).toEqual(inTimeOrder(ofHooked(rows.slice(0, 250))))
        yield* repo.insert(rows.slice(150, 400))
        const queued = yield* queuedFor(first)
        expect(queued.map((row) => row.click_id)).toEqual([
          ...inTimeOrder(ofHooked(rows.slice(0, 250))),
          ...inTimeOrder(ofHooked(rows.slice(250, 400)))
        ])
        expect(queued.filter((row) => row.bot).length).toBe(ofHooked(rows).filter((row) => row.bot).length)
        const byId = new Map(rows.map((row) => [row.id, row]))
        expect(queued.every((row) => byId.get(row.click_id)?.at === row.at && byId.get(row.click_id)?.referrer === row.referrer)).toBe(true)
        expect(yield* queuedFor(second)).toEqual(queued)
        for (const other of others) expect(yield* queuedFor(other)).toEqual([])
      }).pipe(Effect.provide(ClickRepo.Default))
    )

    it.effect("clicks have no trigger with a transition table, which would make COPY insert them one at a time", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ n: number }>`
          SELECT count(*)::int4 AS n FROM pg_trigger WHERE tgrelid = 'clicks'::regclass AND (tgnewtable IS NOT NULL OR tgoldtable IS NOT NULL)`
        expect(row!.n).toBe(0)
      })
    )

    it.effect("no index of the value rows of click_rollups holds clicks or scans, so that their updates stay heap-only; the day rows' does", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const counted = (table: string) =>
          Effect.map(
            sql<{ n: number }>`
              SELECT count(*)::int4 AS n FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
              WHERE i.indrelid = ${table}::regclass AND a.attname IN ('clicks', 'scans')`,
            ([row]) => row!.n
          )
        expect(yield* counted("click_rollups_kind_value")).toBe(0)
        expect(yield* counted("click_rollups_kind_day")).toBe(2)
      })
    )
  })
})

const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"

describe("click writer: batches handed over again (their writer thread stopped before it reported them)", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.scoped("keep their click ids, and are stored and counted once whether or not they were written before", () =>
      Effect.gen(function* () {
        const { domainId, links } = yield* setup
        const settled: Array<number> = []
        const writer = yield* makeClickWriter(
          { flushInterval: "1 hour", batchSize: 50_000, writeTimeout: "5 seconds" },
          new Uint8Array(32),
          mkdtempSync(join(tmpdir(), "links-writer-")),
          { written: () => undefined, spilled: () => undefined, replayed: () => undefined, settled: (seq) => settled.push(seq) }
        ).pipe(Effect.provide(Layer.merge(ClickRepo.Default, GeoIp.layerEmpty)))
        const now = Date.now()
        const clicks = (count: number, offset: number): ReadonlyArray<RawClick> =>
          Array.from({ length: count }, (_, n) => ({
            at: now - (n + offset) * 1000,
            linkId: links[n % links.length]!,
            domainId,
            ip: `192.0.2.${n % 200}`,
            userAgent: BROWSER,
            referer: n % 2 === 0 ? "https://news.example/item" : undefined,
            qr: n % 3 === 0
          }))
        const written = handOver(0, clicks(300, 0))
        const neverWritten = handOver(1, clicks(40, 300))
        writer.add(written)
        yield* writer.flush
        expect(yield* clickCount(domainId)).toBe(300)
        writer.add({ ...written, again: true })
        writer.add({ ...neverWritten, again: true })
        yield* writer.flush
        expect(settled).toEqual([0, 1])
        expect(yield* clickCount(domainId)).toBe(340)
        const sql = yield* SqlClient.SqlClient
        const [counts] = yield* sql<{ clicks: number }>`
          SELECT sum(click_count)::int AS clicks FROM links WHERE domain_id = ${domainId}`
        expect(counts?.clicks).toBe(340)
        yield* expectConsistent(domainId)
      })
    )
  })
})

describe("ClickBatch", () => {
  it("sums per link, UTC hour and value, bots left out", () => {
        const rows = [
          clickRow({ linkId: 1, domainId: 9, at: T0 + 4 * 3600 - 1, ip: "a", country: "US", qr: true }),
          clickRow({ linkId: 1, domainId: 9, at: T0 + 4 * 3600, ip: "a", country: "US" }),
          clickRow({ linkId: 1, domainId: 9, at: T0 + 4 * 3600 + 5, ip: "b", bot: true })
        ]
        const batch = new ClickBatch()
    batch.add(rows.slice(0, 2))
    batch.add(rows.slice(2))
    const { links, rollups, visitors } = batch.summary()
    expect(batch.json().map((json) => JSON.parse(json))).toEqual([rows])
        expect(links).toEqual([{ link_id: 1, clicks: 2, last: rows[1]!.at }])
        const hours = rollups.filter((row) => row.kind === "d").map((row) => [row.hour, row.clicks, row.scans])
        expect(hours).toEqual([
          ["2025-01-31T23:00:00Z", 1, 1],
          ["2025-02-01T00:00:00Z", 1, 0]
        ])
        expect(rollups.filter((row) => row.kind === "h").map((row) => row.value)).toEqual(["23", "00"])
        expect(rollups.filter((row) => row.kind === "g")).toHaveLength(2)
        expect(visitors).toHaveLength(1)
  })
})

describe("giveUpAfter (the click writer's write timeout)", () => {
  it.live("a write is not cut short when its uninterruptible caller is interrupted (a shutdown waits for it)", () =>
    Effect.gen(function* () {
      const outcome = yield* Ref.make<Exit.Exit<string, string> | undefined>(undefined)
      const write = Effect.as(Effect.sleep("200 millis"), "written")
      const flush = Effect.uninterruptible(Effect.flatMap(Effect.exit(giveUpAfter("5 seconds", write)), (exit) => Ref.set(outcome, exit)))
      const fiber = yield* Effect.fork(flush)
      yield* Effect.sleep("20 millis")
      yield* Fiber.interrupt(fiber)
      expect(yield* Ref.get(outcome)).toEqual(Exit.succeed("written"))
    })
  )

  it.live("a write that does not answer is given up at the timeout, and stopped in the background", () =>
    Effect.gen(function* () {
      const stopped = yield* Deferred.make<void>()
      const silent = Effect.onInterrupt(Effect.never, () => Deferred.succeed(stopped, undefined))
      const started = Date.now()
      const exit = yield* Effect.exit(Effect.uninterruptible(giveUpAfter("100 millis", silent)))
      expect(exit).toEqual(Exit.fail("timed out"))
      expect(Date.now() - started).toBeLessThan(1000)
      yield* Deferred.await(stopped)
    })
  )
})
