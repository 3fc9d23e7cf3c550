/**
 * What storing a click costs PostgreSQL (issue #16 item 3): on a fresh database, realistic clicks are
 * written through `ClickRepo.insertFresh` in batches as the click writer makes them (a `ClickBatch`
 * of up to 50,000 clicks, rows added in slices of 200), and per stored click it reports PostgreSQL's
 * CPU, the write-ahead log, the disk growth of the click partitions, of every table the writer keeps
 * beside them and of their indexes, and the writer's own CPU (this process: batch sums, serializing,
 * the client library).
 *
 * PostgreSQL's CPU is utime + stime from /proc/<pid>/stat of the bench database's backends and of
 * the server's background writer, WAL writer and checkpointer, read before the first batch and after
 * the last one plus a settle of about a second (no CHECKPOINT), so that the WAL writer's flushes
 * are counted; backends of other databases on the same server are left out (tests may be running).
 * The WAL figure is the server's (pg_current_wal_lsn() before and after), so other activity on the
 * server adds to it: each round runs on a database of its own and the lowest CPU and WAL of the
 * rounds are reported, since noise only adds.
 *
 *   npm run bench:clicks [-- --clicks 200000 --links 1000 --rounds 3 --user-agents 50 --batch-size 50000]
 *   npm run bench:clicks -- --spread 60 [--uniform]     (one scenario: clicks over the last 60 s)
 *
 * BENCH_DATABASE_URL or DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres);
 * it must run on this machine, since its processes are read from /proc.
 */
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "@effect/sql"
import { createHash, randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import pg from "pg"
import { ClickBatch } from "../src/Clicks/ClickBatch.ts"
import { ClickRepo, type ClickRow } from "../src/Clicks/ClickRepo.ts"
import { classifyUserAgent } from "../src/Clicks/ClickSource.ts"
import { serverClientLayer } from "../src/Sql/Database.ts"
import { migrate } from "../src/Sql/Migrator.ts"
import { places, referrers } from "./support/ClickLoad.ts"
import { type Cleanup, runProgram } from "./support/Cleanup.ts"
import { formatTable } from "./support/Table.ts"
import { seededRandom } from "./support/Random.ts"

const { values: args } = parseArgs({
  options: {
    clicks: { type: "string", default: "200000" },
    links: { type: "string", default: "1000" },
    rounds: { type: "string", default: "3" },
    "user-agents": { type: "string", default: "50" },
    "batch-size": { type: "string", default: "50000" },
    /** Seconds the clicks are spread over, ending now; default: both scenarios (2 days, then 1 minute). */
    spread: { type: "string" },
    /** With --spread: bench:redirect's uniform clicks instead of varied ones. */
    uniform: { type: "boolean", default: false }
  }
})
const CLICKS = Number(args.clicks)
const LINKS = Number(args.links)
const ROUNDS = Number(args.rounds)
const USER_AGENTS = Number(args["user-agents"])
const BATCH_SIZE = Number(args["batch-size"])
const SLICE = 200
const DAY_MS = 86_400_000
const VISITORS = 40_000
const USERS = 10
const BOT_SHARE = 0.05
const QR_SHARE = 0.1
const TICK_US = 1_000_000 / 100

// ---------------------------------------------------------------------------------------------------
// Synthetic clicks

interface Scenario {
  readonly name: string
  readonly spreadMs: number
  /**
   * The traffic of bench:redirect: one client address, one browser agent, no Referer, no place. A
   * batch folds into a few rollup rows per link, so what remains is the cost of the clicks themselves.
   */
  readonly uniform: boolean
}


/** Browser user agents of about 120 characters: Chrome, Edge, Firefox and Safari on five platforms, many versions. */
const browserAgents = (count: number): Array<string> => {
  const platforms = [
    "Windows NT 10.0; Win64; x64",
    "Macintosh; Intel Mac OS X 10_15_7",
    "X11; Linux x86_64",
    "Linux; Android 14; Pixel 8",
    "Linux; Android 13; SM-S911B"
  ]
  const agents: Array<string> = []
  for (let n = 0; agents.length < count; n++) {
    const platform = platforms[n % platforms.length]!
    const version = 120 + Math.floor(n / 10)
    const mobile = platform.includes("Android") ? " Mobile" : ""
    switch (Math.floor(n / platforms.length) % 4) {
      case 0:
        agents.push(`Mozilla/5.0 (${platform}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${version}.0.0.0${mobile} Safari/537.36`)
        break
      case 1:
        agents.push(
          `Mozilla/5.0 (${platform}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${version}.0.0.0${mobile} Safari/537.36 Edg/${version}.0.0.0`
        )
        break
      case 2:
        agents.push(`Mozilla/5.0 (${platform}; rv:${version}.0) Gecko/20100101 Firefox/${version}.0`)
        break
      default:
        agents.push(
          n % 2 === 0
            ? `Mozilla/5.0 (iPhone; CPU iPhone OS 17_${n % 7} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.${n % 7} Mobile/15E148 Safari/604.1`
            : `Mozilla/5.0 (iPad; CPU OS 17_${n % 7} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.${n % 7} Mobile/15E148 Safari/604.1`
        )
    }
  }
  return agents
}

const BOT_AGENTS = [
  "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
  "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
  "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
  "curl/8.5.0"
]

/** Values spread over a table of slots by weight, picked by a uniform draw. */
const picker = <T>(entries: ReadonlyArray<{ readonly value: T; readonly weight: number }>, next: () => number) => {
  const total = entries.reduce((sum, entry) => sum + entry.weight, 0)
  const cumulative: Array<number> = []
  let sum = 0
  for (const entry of entries) {
    sum += entry.weight / total
    cumulative.push(sum)
  }
  return (): T => {
    const draw = next()
    let low = 0
    let high = cumulative.length - 1
    while (low < high) {
      const middle = (low + high) >> 1
      if (cumulative[middle]! < draw) low = middle + 1
      else high = middle
    }
    return entries[low]!.value
  }
}

/** Zipf-like weights 1/(rank+1). */
const zipf = <T>(values: ReadonlyArray<T>) => values.map((value, rank) => ({ value, weight: 1 / (rank + 1) }))

/**
 * The clicks of one round, in time order over the `spreadMs` before `now`, as the click writer enriches them:
 * UUIDv7-like ids, the address as a 32-digit keyed hash (a pool of VISITORS), device and bot from the
 * user agent, referrer host or 'direct', place or nulls.
 */
const makeClicks = (linkIds: ReadonlyArray<number>, domainId: number, now: number, scenario: Scenario): Array<ClickRow> => {
  const { spreadMs } = scenario
  const next = seededRandom(16_003)
  const link = picker(zipf(linkIds), next)
  const place = picker(places(), next)
  const referrer = picker(referrers(), next)
  const agent = picker(zipf(browserAgents(USER_AGENTS)), next)
  const bot = picker(zipf(BOT_AGENTS), next)
  const visitors = Array.from({ length: VISITORS }, (_, n) => createHash("md5").update(`visitor ${n}`).digest("hex"))
  const classes = new Map<string, ReturnType<typeof classifyUserAgent>>()
  const classOf = (userAgent: string) => {
    let known = classes.get(userAgent)
    if (known === undefined) {
      known = classifyUserAgent(userAgent)
      classes.set(userAgent, known)
    }
    return known
  }
  const start = now - spreadMs
  const times = Array.from({ length: CLICKS }, () => start + Math.floor(next() * spreadMs)).sort((a, b) => a - b)
  const nonce = randomUUID().slice(15, 30)
  const uniform = browserAgents(1)[0]!
  const nowhere = { country: null, region: null, city: null }
  return times.map((at, index): ClickRow => {
    const userAgent = scenario.uniform ? uniform : next() < BOT_SHARE ? bot() : agent()
    const { device, bot: isBot } = classOf(userAgent)
    const where = scenario.uniform ? nowhere : place()
    const time = at.toString(16).padStart(12, "0")
    const serial = index.toString(16).padStart(8, "0")
    return {
      id: `${time.slice(0, 8)}-${time.slice(8, 12)}-7${nonce.slice(0, 3)}-${nonce.slice(4, 8)}-${nonce.slice(9, 13)}${serial}`,
      at: new Date(at).toISOString(),
      link_id: link(),
      domain_id: domainId,
      ip_hash: scenario.uniform ? visitors[0]! : visitors[Math.floor(next() ** 2 * VISITORS)]!,
      country: where.country,
      region: where.region,
      city: where.city,
      device,
      referrer: scenario.uniform ? "direct" : referrer(),
      user_agent: userAgent,
      qr: !scenario.uniform && next() < QR_SHARE,
      bot: isBot
    }
  })
}

// ---------------------------------------------------------------------------------------------------
// Measuring

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

const adminQuery = async <Row extends object>(url: string, text: string, values: ReadonlyArray<unknown> = []) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<Row>(text, [...values])).rows
  } finally {
    await client.end()
  }
}

/** utime + stime of a process in clock ticks, 0 if it is gone. */
const processTicks = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** The processes counted as the bench's PostgreSQL work: its database's backends and the writers of the whole server. */
const serverProcesses = (serverUrl: string, database: string) =>
  adminQuery<{ pid: number; kind: string }>(
    serverUrl,
    `SELECT pid, CASE WHEN datname = $1 THEN 'backend' ELSE backend_type END AS kind FROM pg_stat_activity
     WHERE datname = $1 OR backend_type IN ('walwriter', 'background writer', 'checkpointer')`,
    [database]
  )

const walLsn = async (serverUrl: string) =>
  BigInt((await adminQuery<{ lsn: string }>(serverUrl, "SELECT (pg_current_wal_lsn() - '0/0')::text AS lsn"))[0]!.lsn)

interface Sizes {
  readonly tables: ReadonlyMap<string, { readonly heap: number; readonly indexes: number }>
}

/**
 * Heap (with TOAST) and index bytes of the clicks (all partitions) and of every other table the click
 * writer writes, read on the bench database.
 */
const sizes = async (url: string): Promise<Sizes> => {
  const rows = await adminQuery<{ name: string; heap: string; indexes: string }>(
    url,
    `WITH kept AS (
       SELECT c.oid, c.relname::text AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
         AND (c.relname IN ('clicks', 'links', 'link_visitors', 'user_agents') OR c.relname LIKE 'click\\_rollups%')
     ),
     parts AS (
       SELECT k.name, k.oid FROM kept k
       UNION ALL SELECT k.name, i.inhrelid FROM kept k JOIN pg_inherits i ON i.inhparent = k.oid
     )
     SELECT name, sum(pg_table_size(oid))::text AS heap, sum(pg_indexes_size(oid))::text AS indexes FROM parts GROUP BY name`
  )
  return { tables: new Map(rows.map((row) => [row.name, { heap: Number(row.heap), indexes: Number(row.indexes) }])) }
}

interface Round {
  readonly clicks: number
  readonly postgresUs: number
  readonly backendUs: number
  readonly writerUs: number
  readonly walBytes: number
  readonly seconds: number
  readonly growth: ReadonlyMap<string, { readonly heap: number; readonly indexes: number }>
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 1000))

const round = async (serverUrl: string, cleanup: Cleanup, scenario: Scenario, n: number): Promise<Round> => {
  const { spreadMs } = scenario
  const name = `links_bench_clicks_${randomUUID().slice(0, 8)}`
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`)
  cleanup.defer(`drop database ${name}`, async () => {
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  })
  const url = withDatabase(serverUrl, name)
  const layer = ClickRepo.Default.pipe(
    Layer.provideMerge(Layer.effectDiscard(migrate)),
    Layer.provideMerge(serverClientLayer(Redacted.make(url), { maxConnections: 2, applicationName: "bench-clicks" }))
  )
  const runtime = ManagedRuntime.make(layer)
  cleanup.defer(`close the pool of ${name}`, () => runtime.dispose())
  try {
    const now = Date.now()
    const { domainId, linkIds } = await runtime.runPromise(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [account] = yield* sql<{ id: number }>`INSERT INTO accounts (name, plan) VALUES ('bench', 'enterprise') RETURNING id`
        const users = yield* sql<{ id: number }>`
          INSERT INTO users (account_id, email, nickname, role, password_hash, refresh_token_hash)
          SELECT ${account!.id}, 'user' || n || '@bench.example', 'user' || n, 'member', 'x', decode(md5(${name} || n), 'hex')
          FROM generate_series(1, ${USERS}) n RETURNING id`
        const [domain] = yield* sql<{ id: number }>`
          INSERT INTO domains (account_id, domain) VALUES (${account!.id}, ${`${name}.example`}) RETURNING id`
        const links = yield* sql<{ id: number }>`
          INSERT INTO links (domain_id, user_id, url, alias, redirect_url)
          SELECT ${domain!.id}, (${users.map((user) => user.id)}::int8[])[1 + n % ${USERS}], 'https://example.com/' || n, 'a' || n,
                 'https://example.com/' || n
          FROM generate_series(1, ${LINKS}) n ORDER BY n RETURNING id`
        return { domainId: domain!.id, linkIds: links.map((link) => link.id) }
      })
    )
    const clicks = makeClicks(linkIds, domainId, now, scenario)
    // Both pooled connections open, both months' partitions made, statements planned once: a warm writer.
    const repo = await runtime.runPromise(ClickRepo)
    await runtime.runPromise(
      Effect.all(
        [
          repo.ensurePartition(new Date(now - spreadMs)),
          repo.ensurePartition(new Date(now)),
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_sleep(0.05)`)
        ],
        { concurrency: "unbounded" }
      )
    )
    await settle()
    const processes = await serverProcesses(serverUrl, name)
    const before = new Map(processes.map((process) => [process.pid, processTicks(process.pid)]))
    const sizesBefore = await sizes(url)
    const walBefore = await walLsn(serverUrl)
    const writerBefore = process.cpuUsage()
    const started = performance.now()

    for (let start = 0; start < clicks.length; start += BATCH_SIZE) {
      const batch = new ClickBatch()
      const end = Math.min(clicks.length, start + BATCH_SIZE)
      for (let slice = start; slice < end; slice += SLICE) batch.add(clicks.slice(slice, Math.min(end, slice + SLICE)))
      await runtime.runPromise(repo.insertFresh(batch))
    }

    const seconds = (performance.now() - started) / 1000
    const writer = process.cpuUsage(writerBefore)
    await settle()
    const walAfter = await walLsn(serverUrl)
    const after = await serverProcesses(serverUrl, name)
    let postgresTicks = 0
    let backendTicks = 0
    for (const { pid, kind } of after) {
      const ticks = processTicks(pid) - (before.get(pid) ?? 0)
      postgresTicks += ticks
      if (kind === "backend") backendTicks += ticks
    }
    const sizesAfter = await sizes(url)
    const growth = new Map(
      [...sizesAfter.tables].map(([table, size]) => {
        const earlier = sizesBefore.tables.get(table) ?? { heap: 0, indexes: 0 }
        return [table, { heap: size.heap - earlier.heap, indexes: size.indexes - earlier.indexes }] as const
      })
    )
    const [stored] = await adminQuery<{ n: string }>(url, "SELECT count(*) AS n FROM clicks")
    if (Number(stored?.n) !== clicks.length) throw new Error(`${stored?.n} clicks stored of ${clicks.length}`)
    process.stderr.write(
      `round ${n}: ${clicks.length} clicks in ${seconds.toFixed(2)} s, PostgreSQL ${((postgresTicks * TICK_US) / clicks.length).toFixed(2)} µs/click\n`
    )
    return {
      clicks: clicks.length,
      postgresUs: postgresTicks * TICK_US,
      backendUs: backendTicks * TICK_US,
      writerUs: writer.user + writer.system,
      walBytes: Number(walAfter - walBefore),
      seconds,
      growth
    }
  } finally {
    await runtime.dispose()
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

/**
 * Varied clicks (1,000 links, some 600 places, 100 referrers, 40,000 visitors) fold little in a batch,
 * over two days (about 4 clicks per link and hour) or even over one minute: the rollups and visitors
 * take most of the work. bench:redirect's uniform traffic folds into a few rollup rows per link, and
 * the clicks themselves are most of it.
 */
const SCENARIOS: ReadonlyArray<Scenario> =
  args.spread === undefined
    ? [
        { name: "varied, over 2 days", spreadMs: 2 * DAY_MS, uniform: false },
        { name: "varied, over 1 minute", spreadMs: 60_000, uniform: false },
        { name: "uniform (bench:redirect's), over 1 minute", spreadMs: 60_000, uniform: true }
      ]
    : [
        {
          name: `${args.uniform ? "uniform" : "varied"}, over ${args.spread} s`,
          spreadMs: Number(args.spread) * 1000,
          uniform: args.uniform === true
        }
      ]

const report = (scenario: Scenario, rounds: ReadonlyArray<Round>) => {
  const per = (value: number) => (value / CLICKS).toFixed(2)
  const lowest = (pick: (round: Round) => number) => Math.min(...rounds.map(pick))
  const summary: Array<[string, string]> = [
    ["PostgreSQL CPU, µs (lowest round)", per(lowest((r) => r.postgresUs))],
    ["  of which the bench database's backends", per(lowest((r) => r.backendUs))],
    ["PostgreSQL CPU, µs (median round)", per(median(rounds.map((r) => r.postgresUs)))],
    ["writer CPU (this process), µs (median)", per(median(rounds.map((r) => r.writerUs)))],
    ["WAL, bytes (lowest round)", per(lowest((r) => r.walBytes))],
    ["write time, µs (median)", per(median(rounds.map((r) => r.seconds * 1_000_000)))]
  ]
  const last = rounds.at(-1)!
  const tables = [...last.growth].sort(([a], [b]) => a.localeCompare(b))
  const heap = tables.reduce((sum, [, size]) => sum + size.heap, 0)
  const indexes = tables.reduce((sum, [, size]) => sum + size.indexes, 0)
  process.stdout.write(`\nClicks ${scenario.name}: per stored click (${CLICKS} clicks, ${rounds.length} rounds)\n`)
  process.stdout.write(`${formatTable(["measure", "per click"], summary)}\n\n`)
  process.stdout.write(
    `${formatTable(
      ["disk growth, bytes (last round)", "heap", "indexes", "total"],
      [
        ...tables.map(([table, size]) => [table, per(size.heap), per(size.indexes), per(size.heap + size.indexes)]),
        ["all", per(heap), per(indexes), per(heap + indexes)]
      ]
    )}\n`
  )
}

runProgram("bench:clicks", async (cleanup) => {
  const serverUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
  const [version] = await adminQuery<{ server_version: string }>(serverUrl, "SHOW server_version")
  process.stderr.write(
    `PostgreSQL ${version?.server_version}: ${CLICKS} clicks over ${LINKS} links, ${USER_AGENTS} browser user agents, batches of ${BATCH_SIZE}, ${ROUNDS} rounds\n`
  )
  const results: Array<readonly [Scenario, ReadonlyArray<Round>]> = []
  for (const scenario of SCENARIOS) {
    const rounds: Array<Round> = []
    for (let n = 1; n <= ROUNDS; n++) rounds.push(await round(serverUrl, cleanup, scenario, n))
    results.push([scenario, rounds])
  }
  for (const [scenario, rounds] of results) report(scenario, rounds)
  return 0
})
