/**
 * Time and PostgreSQL CPU of a domain's reads of raw clicks: the domain report over windows whose
 * edges are read click by click (E17 by day, E18 by country), and the clicks export of a domain in
 * 5,000-row chunks. For comparing two versions of the readers on the same clicks:
 *
 *   npm run bench:domain-reads -- --load --clicks 2000000        (prints the database's name)
 *   npm run bench:domain-reads -- --database NAME [--rounds 3]   (from each version's checkout, alternated)
 *
 * --load makes a database, migrates it with this checkout's migrations and loads two domains of
 * 1,000 links each over the 365 days before now (bench/support/ClickLoad.ts, the second domain a copy
 * of the first's clicks on its own links), then a copy of it, NAME_index, with the index
 * clicks_domain_at (domain_id, at) of sql/0005 for versions that read by it. A version reads the
 * database whose name it is given. CPU is the reading connection's backend (/proc/<pid>/stat), so
 * PostgreSQL must run on this machine. The databases are left for the runs; drop them after.
 */
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { SqlClient } from "@effect/sql"
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import pg from "pg"
import { AnalyticsRepo } from "../src/Analytics/AnalyticsRepo.ts"
import { type ClickKey, ExportRepo } from "../src/Export/ExportRepo.ts"
import { serverClientLayer } from "../src/Sql/Database.ts"
import { migrate } from "../src/Sql/Migrator.ts"
import { loadClicks } from "./support/ClickLoad.ts"

const { values: args } = parseArgs({
  options: {
    load: { type: "boolean", default: false },
    clicks: { type: "string", default: "2000000" },
    database: { type: "string" },
    rounds: { type: "string", default: "3" }
  }
})
const SERVER = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const DAY = 86_400
const LINKS = 1000
const CHUNK = 5000

const withDatabase = (database: string) => {
  const url = new URL(SERVER)
  url.pathname = `/${database}`
  return url.toString()
}

const admin = async (text: string) => {
  const client = new pg.Client({ connectionString: SERVER })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

const runtimeFor = (database: string) =>
  ManagedRuntime.make(
    Layer.mergeAll(AnalyticsRepo.Default, ExportRepo.Default).pipe(
      Layer.provideMerge(serverClientLayer(Redacted.make(withDatabase(database)), { maxConnections: 1, applicationName: "bench-domain-reads" }))
    )
  )

const load = async () => {
  const name = `links_bench_domain_reads_${Date.now().toString(36)}`
  await admin(`CREATE DATABASE ${name}`)
  const runtime = ManagedRuntime.make(
    Layer.effectDiscard(migrate).pipe(Layer.provideMerge(serverClientLayer(Redacted.make(withDatabase(name)), { maxConnections: 1 })))
  )
  const { domains, linkIds } = await runtime.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [account] = yield* sql<{ id: number }>`INSERT INTO accounts (name, plan) VALUES ('bench', 'enterprise') RETURNING id`
      const [user] = yield* sql<{ id: number }>`
        INSERT INTO users (account_id, email, nickname, role, password_hash, refresh_token_hash)
        VALUES (${account!.id}, 'reads@bench.example', 'reads', 'account_admin', 'x', decode(md5('reads'), 'hex')) RETURNING id`
      const domains = yield* sql<{ id: number }>`
        INSERT INTO domains (account_id, domain) SELECT ${account!.id}, 'd' || n || '.bench.example' FROM generate_series(1, 2) n ORDER BY n RETURNING id`
      const links = yield* sql<{ id: number }>`
        INSERT INTO links (domain_id, user_id, url, alias, redirect_url)
        SELECT ${domains[0]!.id}, ${user!.id}, 'https://example.com/' || n, 'a' || n, 'https://example.com/' || n
        FROM generate_series(1, ${LINKS}) n ORDER BY n RETURNING id`
      yield* sql`
        INSERT INTO links (domain_id, user_id, url, alias, redirect_url)
        SELECT ${domains[1]!.id}, ${user!.id}, 'https://example.com/' || n, 'a' || n, 'https://example.com/' || n
        FROM generate_series(1, ${LINKS}) n ORDER BY n`
      return { domains: domains.map((row) => row.id), linkIds: links.map((row) => row.id) }
    })
  )
  await runtime.dispose()
  const clients = [new pg.Client({ connectionString: withDatabase(name) }), new pg.Client({ connectionString: withDatabase(name) })]
  for (const client of clients) await client.connect()
  const log = (line: string) => process.stderr.write(`${line}\n`)
  await loadClicks(clients, { clicks: Number(args.clicks), domainId: domains[0]!, linkIds, end: new Date(), days: 365, visitors: 100_000, log })
  const first = clients[0]!
  // The other domain: the same clicks on its own links (link n of one is link n + LINKS of the other).
  await first.query(
    `INSERT INTO clicks (id, at, link_id, domain_id, ip_hash, country, region, city, device, referrer, user_agent_id, qr, bot)
     SELECT gen_random_uuid(), at, link_id + $2, $3, ip_hash, country, region, city, device, referrer, user_agent_id, qr, bot
     FROM clicks WHERE domain_id = $1`,
    [domains[0], LINKS, domains[1]]
  )
  const hasDays = (await first.query("SELECT to_regclass('domain_click_days') IS NOT NULL AS found")).rows[0]?.found === true
  if (hasDays) {
    await first.query(
      `INSERT INTO domain_click_days SELECT $3, day, link_id + $2 FROM domain_click_days WHERE domain_id = $1 ORDER BY 2, 3`,
      [domains[0], LINKS, domains[1]]
    )
  }
  await first.query("VACUUM ANALYZE")
  for (const client of clients) await client.end()
  await admin(`CREATE DATABASE ${name}_index TEMPLATE ${name}`)
  const indexed = new pg.Client({ connectionString: withDatabase(`${name}_index`) })
  await indexed.connect()
  await indexed.query("CREATE INDEX IF NOT EXISTS clicks_domain_at ON clicks (domain_id, at)")
  await indexed.query("VACUUM ANALYZE clicks")
  await indexed.end()
  process.stdout.write(`${name} (domain ${domains[0]})\n`)
}

/** The backend's CPU in ms: utime + stime of /proc/<pid>/stat, in clock ticks of 10 ms. */
const backendCpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

const measure = async (database: string) => {
  const runtime = runtimeFor(database)
  const { pid, domainId } = await runtime.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ pid: number; domain: number }>`SELECT pg_backend_pid() AS pid, (SELECT min(id) FROM domains)::int4 AS domain`
      return { pid: row!.pid, domainId: row!.domain }
    })
  )
  const now = Math.floor(Date.now() / 1000)
  const scope = { _tag: "owners", domainId, userId: "all" } as const
  const exportAll = (from: number, to: number) =>
    Effect.flatMap(ExportRepo, (repo) =>
      Effect.gen(function* () {
        let after = Option.none<ClickKey>()
        let rows = 0
        for (;;) {
          const chunk = yield* repo.clicks({ domainId, linkId: undefined, from, to }, after, CHUNK)
          rows += chunk.length
          const last = chunk.at(-1)
          if (chunk.length < CHUNK || last === undefined) return rows
          after = Option.some({ at: last.at_key, id: last.engagement_id })
        }
      })
    )
  const reads: ReadonlyArray<readonly [string, Effect.Effect<number, unknown, AnalyticsRepo | ExportRepo>]> = [
    ["E17 year to now (edges by click)", Effect.flatMap(AnalyticsRepo, (repo) => Effect.map(repo.byDay(scope, { from: now - 365 * DAY, to: now, now }), (r) => r.length))],
    ["E17 last 2 hours", Effect.flatMap(AnalyticsRepo, (repo) => Effect.map(repo.byDay(scope, { from: now - 7200, to: now, now }), (r) => r.length))],
    [
      "E18 countries, week to now",
      Effect.flatMap(AnalyticsRepo, (repo) =>
        Effect.map(repo.grouped(scope, "place", 1, { from: now - 7 * DAY - 1234, to: now, now }, {}, { limit: 10, offset: 0 }), (r) => r.total)
      )
    ],
    ["export, 1 day ending 20 days ago", exportAll(now - 21 * DAY, now - 20 * DAY)],
    ["export, 30 days ending 10 days ago", exportAll(now - 40 * DAY, now - 10 * DAY)],
    ["export, first chunk of the year", Effect.flatMap(ExportRepo, (repo) => Effect.map(repo.clicks({ domainId, linkId: undefined, from: now - 365 * DAY, to: now }, Option.none(), CHUNK), (r) => r.length))]
  ]
  for (const [label, read] of reads) {
    await runtime.runPromise(read)
    const cpu = backendCpuMs(pid)
    const started = performance.now()
    const answer = await runtime.runPromise(read)
    const ms = performance.now() - started
    process.stdout.write(`${label.padEnd(40)} ${ms.toFixed(1).padStart(9)} ms  backend CPU ${String(backendCpuMs(pid) - cpu).padStart(6)} ms  answer ${answer}\n`)
  }
  await runtime.dispose()
}

if (args.load) await load()
else if (args.database === undefined) throw new Error("--load or --database NAME")
else for (let n = 0; n < Number(args.rounds); n++) await measure(args.database)
