// Also on a PostgreSQL server: its page layout and heap-only updates are the server's.
import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Layer, Option } from "effect"
import { AnalyticsRepo } from "../src/Analytics/AnalyticsRepo.ts"
import { ClickBatch } from "../src/Clicks/ClickBatch.ts"
import { ClickRepo, type ClickRow } from "../src/Clicks/ClickRepo.ts"
import { type ClickKey, ExportRepo } from "../src/Export/ExportRepo.ts"
import { loadMigrations, migrate } from "../src/Sql/Migrator.ts"
import { clickRow } from "./support/Clicks.ts"
import { makeTestDatabase } from "./support/TestDatabase.ts"

/** 2025-03-31T22:00:00Z: the clicks below cross a month boundary (two partitions). */
const T0 = 1_743_458_400

const BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
/** User agents as the writer may store them: quotes, backslashes, tabs and new lines, accents, empty, 512 units. */
const AGENTS = [
  BROWSER,
  'Quote " and \\ backslash\tand tab\nand line',
  "Ünïcödé agent ✓",
  "",
  "x".repeat(512),
  "{braces}, commas and NULL"
]

/** An account, a user, a domain and two links, by SQL (the repositories under test need nothing else). */
const setup = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [account] = yield* sql<{ id: number }>`INSERT INTO accounts (name, plan) VALUES ('storage', 'team') RETURNING id`
  const [user] = yield* sql<{ id: number }>`
    INSERT INTO users (account_id, email, nickname, role, password_hash, refresh_token_hash)
    VALUES (${account!.id}, ${`storage-${account!.id}@example.com`}, 'storage', 'account_admin', 'x',
            decode(md5(${String(account!.id)}), 'hex'))
    RETURNING id`
  const [domain] = yield* sql<{ id: number }>`
    INSERT INTO domains (account_id, domain) VALUES (${account!.id}, ${`storage-${account!.id}.example`}) RETURNING id`
  const links = yield* sql<{ id: number }>`
    INSERT INTO links (domain_id, user_id, url, alias, redirect_url)
    SELECT ${domain!.id}, ${user!.id}, 'https://example.com/' || n, 'a' || n, 'https://example.com/' || n
    FROM generate_series(1, 2) n ORDER BY n RETURNING id`
  return { domainId: domain!.id, links: links.map((link) => link.id) }
})

/** Clicks over two hours across the month boundary, each user agent in turn. */
const clicks = (count: number, links: ReadonlyArray<number>, domainId: number, agents = AGENTS): Array<ClickRow> =>
  Array.from({ length: count }, (_, n) => ({
    ...clickRow({ linkId: links[n % links.length]!, domainId, at: T0 + n * 37, ip: `198.51.100.${n % 7}`, bot: n % 11 === 0 }),
    user_agent: agents[n % agents.length]!
  }))

const storedAgents = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ user_agent: string }>`SELECT user_agent FROM user_agents ORDER BY id`)

/** R1's rows of a link, all of them. */
const rawClicks = (linkId: number) =>
  Effect.flatMap(AnalyticsRepo, (repo) => repo.rawClicks(linkId, { limit: 1000, offset: 0 }))

const clickCount = (linkIds: ReadonlyArray<number>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: number; counted: number }>`
      SELECT (SELECT count(*) FROM clicks WHERE ${sql.in("link_id", linkIds)})::int AS n,
             (SELECT sum(click_count) FROM links WHERE ${sql.in("id", linkIds)})::int AS counted`, ([row]) => row!)
  )

/** R1 as it should be for `rows` of one link: newest first, the stored user agent text. */
const expectedRaw = (rows: ReadonlyArray<ClickRow>, linkId: number) =>
  rows
    .filter((row) => row.link_id === linkId)
    .sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1))
    .map((row) => ({ engagement_id: row.id, user_agent: row.user_agent, bot: row.bot }))

const migrated = Layer.mergeAll(ClickRepo.Default, AnalyticsRepo.Default).pipe(
  Layer.provideMerge(Layer.effectDiscard(migrate).pipe(Layer.provideMerge(makeTestDatabase())))
)

describe("click storage: a dictionary of user agents", () => {
  layer(migrated, { timeout: 60_000 })((it) => {
    it.effect("each user agent is stored once, and R1 reads every click's own back", () =>
      Effect.gen(function* () {
        const { domainId, links } = yield* setup
        const repo = yield* ClickRepo
        const rows = clicks(600, links, domainId)
        const before = (yield* storedAgents).length
        // Added in slices as the writer does; two batches share every agent.
        const first = new ClickBatch()
        for (let start = 0; start < 400; start += 200) first.add(rows.slice(start, start + 200))
        yield* repo.insertFresh(first)
        yield* repo.insertFresh(ClickBatch.of(rows.slice(400)))
        const agents = (yield* storedAgents).map((row) => row.user_agent)
        expect(agents.length - before).toBe(AGENTS.length)
        expect([...agents].sort()).toEqual([...new Set([...agents, ...AGENTS])].sort())
        for (const linkId of links) {
          const raw = yield* rawClicks(linkId)
          expect(raw.total).toBe(300)
          expect(raw.rows.map((row) => ({ engagement_id: row.engagement_id, user_agent: row.user_agent, bot: row.bot }))).toEqual(
            expectedRaw(rows, linkId)
          )
        }
        // The clicks hold the id, not the text.
        const sql = yield* SqlClient.SqlClient
        const columns = yield* sql<{ name: string }>`
          SELECT attname AS name FROM pg_attribute WHERE attrelid = 'clicks'::regclass AND attnum > 0 AND NOT attisdropped`
        expect(columns.map((column) => column.name)).toContain("user_agent_id")
        expect(columns.map((column) => column.name)).not.toContain("user_agent")
      })
    )

    it.effect("a new agent among known ones is added; another repository (instance) finds the same ids", () =>
      Effect.gen(function* () {
        const { domainId, links } = yield* setup
        const fresh = `${BROWSER} Fresh/${links[0]}`
        const rows = clicks(30, links, domainId, [BROWSER, fresh])
        yield* (yield* ClickRepo).insertFresh(ClickBatch.of(rows.slice(0, 10)))
        // A second repository knows nothing yet: it looks the agents up, and enters none twice.
        const other = yield* Effect.provide(ClickRepo, ClickRepo.Default)
        yield* other.insertFresh(ClickBatch.of(rows.slice(10)))
        const agents = (yield* storedAgents).map((row) => row.user_agent)
        expect(agents.filter((agent) => agent === fresh)).toHaveLength(1)
        expect(agents.filter((agent) => agent === BROWSER)).toHaveLength(1)
        const raw = yield* rawClicks(links[0]!)
        expect(raw.rows.map((row) => row.user_agent)).toEqual(expectedRaw(rows, links[0]!).map((row) => row.user_agent))
      })
    )

    it.effect("every field of a click reads back as written: texts of any kind, nulls, times to the millisecond, flags", () =>
      Effect.gen(function* () {
        const { domainId, links } = yield* setup
        const texts = ["🏙 Zürich", "Tab\there and \\ back", 'Quote " \\N', "", "line\nand\rreturn"]
        const rows = clicks(40, links, domainId).map((row, n): ClickRow => ({
          ...row,
          at: new Date((T0 + n * 37) * 1000 + (n % 1000)).toISOString(),
          country: n % 5 === 4 ? null : "CH",
          region: n % 3 === 0 ? null : texts[n % texts.length]!,
          city: texts[(n + 1) % texts.length]!,
          referrer: n % 2 === 0 ? "direct" : `ü${texts[n % texts.length]!}.example`,
          qr: n % 4 === 0
        }))
        yield* (yield* ClickRepo).insertFresh(ClickBatch.of(rows))
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<Omit<ClickRow, "user_agent">>`
          SELECT id::text AS id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, link_id, domain_id,
                 encode(ip_hash, 'hex') AS ip_hash, country, region, city, device, referrer, qr, bot
          FROM clicks WHERE ${sql.in("link_id", links)} ORDER BY at, id`
        const written = [...rows]
          .sort((a, b) => (a.at === b.at ? (a.id < b.id ? -1 : 1) : a.at < b.at ? -1 : 1))
          .map(({ user_agent: _, ...row }) => row)
        expect(stored).toEqual(written)
      })
    )

    it.effect("replays through insert skip the clicks already stored (by link, time and id) and count the rest once", () =>
      Effect.gen(function* () {
        const { domainId, links } = yield* setup
        const repo = yield* ClickRepo
        const rows = clicks(300, links, domainId)
        const nonBots = (part: ReadonlyArray<ClickRow>) => part.filter((row) => !row.bot).length
        yield* repo.insertFresh(ClickBatch.of(rows.slice(0, 100)))
        const replayed = yield* repo.insert(rows.slice(0, 200))
        expect(replayed.reduce((sum, link) => sum + link.clicks, 0)).toBe(nonBots(rows.slice(100, 200)))
        expect(yield* repo.insert(rows.slice(0, 200))).toEqual([])
        yield* repo.insert(rows)
        expect(yield* clickCount(links)).toEqual({ n: 300, counted: nonBots(rows) })
        for (const linkId of links) {
          const raw = yield* rawClicks(linkId)
          expect(raw.rows.map((row) => ({ engagement_id: row.engagement_id, user_agent: row.user_agent, bot: row.bot }))).toEqual(
            expectedRaw(rows, linkId)
          )
        }
      })
    )

    it.effect("a fresh batch holding a stored click fails whole: the key (link_id, at, id) is unique", () =>
      Effect.gen(function* () {
        const { domainId, links } = yield* setup
        const repo = yield* ClickRepo
        const rows = clicks(50, links, domainId)
        yield* repo.insertFresh(ClickBatch.of(rows.slice(0, 20)))
        const failed = yield* Effect.either(repo.insertFresh(ClickBatch.of(rows.slice(10))))
        expect(failed._tag).toBe("Left")
        expect((yield* clickCount(links)).n).toBe(20)
      })
    )
  })
})

/** The page of each row of `table` that `where` picks, by key (a link's id, a rollup row's key columns). */
const pagesOf = (table: "links" | "click_rollups_hour" | "click_rollups_link_month", where: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const key = {
      links: "id::text",
      click_rollups_hour: "concat_ws('/', link_id, kind, hour, value, region, city)",
      click_rollups_link_month: "concat_ws('/', link_id, month)"
    }[table]
    return sql.unsafe<{ key: string; page: string }>(
      `SELECT ${key} AS key, split_part(trim(both '()' from ctid::text), ',', 1) AS page FROM ${table} WHERE ${where} ORDER BY 1`
    )
  })

const linkPages = (ids: ReadonlyArray<number>) => pagesOf("links", `id IN (${ids.join(", ")})`)

/**
 * 300 more links of about 350 bytes each, enough to fill pages as far as the table lets them: the
 * links of each page holding at least eight of them (a page the inserts filled), by page.
 */
const fullPages = Effect.gen(function* () {
  const { domainId, links } = yield* setup
  const sql = yield* SqlClient.SqlClient
  const created = yield* sql<{ id: number }>`
    INSERT INTO links (domain_id, user_id, url, alias, redirect_url)
    SELECT l.domain_id, l.user_id, l.url || '/' || n || repeat('x', 250), l.alias || 'p' || n, l.redirect_url
    FROM links l, generate_series(1, 300) n WHERE l.id = ${links[0]!} ORDER BY n RETURNING id`
  const byPage = new Map<string, Array<number>>()
  for (const { key, page } of yield* linkPages(created.map((link) => link.id))) byPage.set(page, [...(byPage.get(page) ?? []), Number(key)])
  const full = [...byPage.values()].filter((onPage) => onPage.length >= 8)
  expect(full.length).toBeGreaterThanOrEqual(5)
  return { domainId, full }
})

describe("click storage: the updates of a batch stay on their pages", () => {
  layer(migrated, { timeout: 60_000 })((it) => {
    it.effect("a link's new click count is a heap-only tuple beside the old one: no index of links gets an entry per batch", () =>
      Effect.gen(function* () {
        const { domainId, full } = yield* fullPages
        // One link of each full page.
        const chosen = full.map((onPage) => onPage[0]!)
        const before = yield* linkPages(chosen)
        yield* (yield* ClickRepo).insertFresh(ClickBatch.of(chosen.map((linkId) => clickRow({ linkId, domainId, at: T0 }))))
        expect(yield* clickCount(chosen)).toEqual({ n: chosen.length, counted: chosen.length })
        expect(yield* linkPages(chosen)).toEqual(before)
      })
    )

    it.effect("every link of full pages, then every hourly and monthly rollup row of theirs, all updated heap-only (sql/0023)", () =>
      Effect.gen(function* () {
        const { domainId, full } = yield* fullPages
        // All the rows of those pages get a new version in one batch.
        const chosen = full.flat()
        const batch = (round: number) =>
          ClickBatch.of(
            chosen.flatMap((linkId) => [
              clickRow({ linkId, domainId, at: T0 + round, country: "DE", region: "BE", city: "Berlin", referrer: "example.com" }),
              clickRow({ linkId, domainId, at: T0 + round, device: "mobile", qr: true })
            ])
          )
        const repo = yield* ClickRepo
        const linksBefore = yield* linkPages(chosen)
        yield* repo.insertFresh(batch(1))
        expect(yield* linkPages(chosen)).toEqual(linksBefore)
        const rollupPages = Effect.forEach(["click_rollups_hour", "click_rollups_link_month"] as const, (table) =>
          pagesOf(table, `link_id IN (${chosen.join(", ")})`)
        )
        const rollupsBefore = yield* rollupPages
        expect(rollupsBefore.map((rows) => rows.length)).toEqual([chosen.length * 7, chosen.length])
        yield* repo.insertFresh(batch(2))
        expect(yield* clickCount(chosen)).toEqual({ n: chosen.length * 4, counted: chosen.length * 4 })
        expect(yield* rollupPages).toEqual(rollupsBefore)
      })
    )
  })
})

describe("click storage: migration 0012 keeps the user agents of clicks stored before it", () => {
  layer(makeTestDatabase(), { timeout: 60_000 })((it) => {
    it.effect("every click's user agent is entered once and read back by R1", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const migrations = loadMigrations()
        yield* sql.withTransaction(
          Effect.forEach(
            migrations.filter((migration) => migration.id < 12),
            (migration) => sql.unsafe(migration.sql),
            { discard: true }
          )
        )
        const { domainId, links } = yield* setup
        const rows = clicks(120, links, domainId)
        for (const month of ["2025-03", "2025-04"]) {
          const from = new Date(`${month}-01T00:00:00Z`)
          const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1))
          yield* sql.unsafe(
            `CREATE TABLE clicks_y${month.replace("-", "m")} PARTITION OF clicks FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`
          )
        }
        // As the writer stored clicks before: the user agent's text in each row.
        yield* sql`
          INSERT INTO clicks (id, at, link_id, domain_id, ip_hash, country, region, city, device, referrer, user_agent, qr, bot)
          SELECT id, at, link_id, domain_id, decode(ip_hash, 'hex'), country, region, city, device, referrer, user_agent, qr, bot
          FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(id uuid, at timestamptz, link_id bigint, domain_id bigint,
            ip_hash text, country text, region text, city text, device text, referrer text, user_agent text, qr boolean, bot boolean)`
        // 0012, and the later ones the repositories below write with.
        yield* sql.withTransaction(
          Effect.forEach(
            migrations.filter((migration) => migration.id >= 12),
            (migration) => sql.unsafe(migration.sql),
            { discard: true }
          )
        )
        const agents = (yield* storedAgents).map((row) => row.user_agent)
        expect([...agents].sort()).toEqual([...AGENTS].sort())
        const repo = yield* Effect.provide(AnalyticsRepo, AnalyticsRepo.Default)
        for (const linkId of links) {
          const raw = yield* repo.rawClicks(linkId, { limit: 1000, offset: 0 })
          expect(raw.rows.map((row) => ({ engagement_id: row.engagement_id, user_agent: row.user_agent, bot: row.bot }))).toEqual(
            expectedRaw(rows, linkId)
          )
        }
        // And the clicks converted are replayed like any: present ones skipped.
        const clickRepo = yield* Effect.provide(ClickRepo, ClickRepo.Default)
        expect(yield* clickRepo.insert(rows)).toEqual([])
        expect((yield* clickCount(links)).n).toBe(120)
      })
    )
  })
})

/** 2025-04-01T00:00:00Z: the clicks below sit on and beside the boundaries of seconds after it. */
const S0 = T0 + 7200

/** Clicks of two links at S0, S0 + 20 s ... S0 + 80 s: on the second, a millisecond either side, several at one instant, half a second after. */
const secondClicks = (links: ReadonlyArray<number>, domainId: number): Array<ClickRow> =>
  [0, 20, 40, 60, 80].flatMap((second) =>
    [-0.001, 0, 0, 0, 0.001, 0.5].map((offset, n) => {
      const row = clickRow({ linkId: links[n % links.length]!, domainId, at: S0 + second })
      return { ...row, at: new Date(Math.round((S0 + second + offset) * 1000)).toISOString() }
    })
  )

/** The plan's index scans of clicks, named after the index of `clicks` that each partition's index belongs to. */
const clickIndexesOf = (plan: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const names = [...plan.matchAll(/ using (\S+) on /g)].map((match) => match[1]!)
    return Effect.map(
      sql<{ name: string }>`
        SELECT DISTINCT p.relname AS name FROM pg_class i JOIN pg_inherits h ON h.inhrelid = i.oid JOIN pg_class p ON p.oid = h.inhparent
        WHERE ${sql.in("i.relname", names.length === 0 ? [""] : names)}`,
      (rows) => rows.map((row) => row.name)
    )
  })

describe("click storage: a domain's clicks by time (clicks_domain_at)", () => {
  layer(Layer.provideMerge(ExportRepo.Default, migrated), { timeout: 60_000 })((it) => {
    it.effect("the clicks export of a window gives the window's clicks in time and id order, page after page (pages cut inside seconds)", () =>
      Effect.gen(function* () {
        const { domainId, links } = yield* setup
        yield* (yield* ClickRepo).insertFresh(ClickBatch.of(secondClicks(links, domainId)))
        const sql = yield* SqlClient.SqlClient
        const repo = yield* ExportRepo
        const windows = [
          { from: S0, to: S0 + 80 },
          { from: S0 + 20, to: S0 + 60 },
          { from: S0 - 60, to: S0 + 600 }
        ]
        for (const window of windows) {
          const expected = yield* sql<{ id: string }>`
            SELECT id::text AS id FROM clicks WHERE domain_id = ${domainId}
              AND at >= to_timestamp(${window.from}) AND at < to_timestamp(${window.to}) ORDER BY at, id`
          const read: Array<string> = []
          let after = Option.none<ClickKey>()
          for (;;) {
            const page = yield* repo.clicks({ domainId, linkId: undefined, ...window }, after, 4)
            read.push(...page.map((row) => row.engagement_id))
            const last = page.at(-1)
            if (page.length < 4 || last === undefined) break
            after = Option.some({ at: last.at_key, id: last.engagement_id })
          }
          expect(read).toEqual(expected.map((row) => row.id))
          expect(read.length).toBeGreaterThan(0)
        }
      })
    )

    it.effect("a domain's clicks in a time range, and in the export's order, are found by clicks_domain_at (domain reports, window plans, the export)", () =>
      Effect.gen(function* () {
        const { domainId, links } = yield* setup
        yield* (yield* ClickRepo).insertFresh(ClickBatch.of(secondClicks(links, domainId)))
        const sql = yield* SqlClient.SqlClient
        const range = sql`c.at >= to_timestamp(${S0 + 20}) AND c.at < to_timestamp(${S0 + 60})`
        const explain = (statement: Fragment) =>
          sql.withTransaction(
            Effect.gen(function* () {
              yield* sql`SET LOCAL enable_seqscan = off`
              const rows = yield* sql<{ "QUERY PLAN": string }>`EXPLAIN ${statement}`
              return rows.map((row) => row["QUERY PLAN"]).join("\n")
            })
          )
        const counted = yield* explain(sql`SELECT count(*) FROM clicks c WHERE c.domain_id = ${domainId} AND ${range}`)
        expect(yield* clickIndexesOf(counted)).toEqual(["clicks_domain_at"])
        const ordered = yield* explain(
          sql`SELECT c.id FROM clicks c WHERE c.domain_id = ${domainId} AND ${range} ORDER BY c.at, c.id LIMIT 4`
        )
        expect(yield* clickIndexesOf(ordered)).toEqual(["clicks_domain_at"])
      })
    )
  })
})
