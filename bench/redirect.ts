/**
 * Load benchmark of the redirect hot path (`GET /<alias>` on a registered domain) of the real server
 * process, beside a bare node:http reference answering the same 301 without any lookup, loaded with
 * the same autocannon settings in the same run. `npm run bench:redirect`.
 *
 * What runs, in order:
 * - saturation: a warm-up of each server, then BENCH_ROUNDS rounds alternating the reference and the
 *   service, each as fast as BENCH_CONNECTIONS connections go; the table shows every round and the
 *   median of each server, since other work on a small machine skews single runs;
 * - fixed rate: for each rate of BENCH_RATES, BENCH_RATE_ROUNDS rounds of the reference then the
 *   service at that overall rate (requests evenly spaced by support/PacedLoad.ts, an open-loop
 *   generator in a child process) over BENCH_RATE_CONNECTIONS keep-alive connections. On two cores
 *   shared with PostgreSQL and the generator, one 10-second run in three or four has a tail several
 *   times its neighbours' whatever it runs (the bare reference too), and the machine's speed drifts
 *   between rounds, so every target that compares two servers or scenarios takes their ratio within
 *   each round (saturation req/s, p99 at the fixed rate) and the median of those ratios over the
 *   rounds; p99.9 under 10 ms takes the median of the rounds' p99.9. Every round's figure is printed.
 * Every round loads, after the reference, the plain links (/l0.., the figures the targets below are
 * about) and three smart-link scenarios (issue #24), in an order that rotates by one each round
 * (saturation round n, and the n-th fixed-rate round over all rates, start at the n-th of plain,
 * rules, ab, limited), so that none always runs first or last. The smart links: links with 10 targeting rules on device, language and country, of which the visitor matches the last
 * (/r0..), A/B links splitting 50/50 (/ab0..), and click-limited links (/c0.., a limit never
 * reached: every visit is counted, in PostgreSQL since the bench sets no REDIS_URL); each is
 * compared with the plain links.
 *
 * Environment (all optional):
 *   BENCH_SECONDS            length of each saturation run, s (default 10)
 *   BENCH_WARMUP_SECONDS     saturation warm-up of each server before the first round, s (default 5)
 *   BENCH_CONNECTIONS        connections of the saturation runs (default 50)
 *   BENCH_ROUNDS             saturation rounds (default 3)
 *   BENCH_RATES              fixed rates, req/s, comma separated (default 10000,25000; empty: none)
 *   BENCH_RATE_CONNECTIONS   connections of the fixed-rate runs (default 100)
 *   BENCH_RATE_SECONDS       length of each fixed-rate run, s (default 10)
 *   BENCH_RATE_WARMUP_SECONDS  seconds at the rate before each fixed-rate run, not measured (default 1)
 *   BENCH_RATE_ROUNDS        runs of every scenario at each fixed rate (default 3)
 *   BENCH_DATABASE_URL or DATABASE_URL   a PostgreSQL server: a fresh database on it, dropped at the
 *                            end; else embedded PGlite (then no PostgreSQL CPU and no click count)
 *   BENCH_PROFILE_DIR        --cpu-prof of the service into that directory (support/ServiceProcess.ts)
 *
 * Output (stdout; progress and the service's own output go to stderr):
 * - the machine (CPU model, cores, memory, node) and the settings;
 * - the saturation rounds: req/s, p50/p99/p99.9 latency, answers other than 301, errors, RSS, CPU;
 * - the summary, one row per run kind (saturation reference/service as the medians of the rounds,
 *   each rate's reference/service): achieved req/s, p50/p99/p99.9/max latency in ms, the slowest
 *   first answer of a connection, the busiest and quietest 100 ms of the run; then the cost of each
 *   (saturation: all rounds together): the event-loop delay of the service's redirect and click
 *   threads and of the reference's only thread (largest per-second max and p99), the redirect
 *   thread's run-queue wait and CPU per second, the server process's CPU seconds per 100,000
 *   redirects, the PostgreSQL server's CPU seconds per 100,000 redirects and µs per stored click,
 *   clicks stored against redirects answered;
 * - per run: status codes, where the CPU went (server, generator, PostgreSQL, other processes),
 *   autocannon's own whole-ms percentiles, the event-loop figures, how long the clicks took to be
 *   stored, the PostgreSQL CPU by process role and the processes it started and ended;
 * - clicks recorded against redirects answered after the service's SIGTERM, storage per click (bytes
 *   of write-ahead log and of each table the click writer keeps), a warning naming the runs during
 *   which other processes took over 20 % of a core or other databases used PostgreSQL, and the
 *   targets, PASS/FAIL.
 *
 * How it measures:
 * - latency, saturation runs: every response's time from the write of its request to the end of its
 *   answer, in ms at full precision, kept by support/LatencyRecorder.cts in autocannon's worker
 *   (autocannon's own histogram keeps whole ms only); each connection's first answer apart (it
 *   includes the TCP connect while autocannon's fresh worker opens every connection);
 * - latency, fixed-rate runs: request n is due at start + n / rate (sent on each millisecond's tick,
 *   on the first idle connection, all connected before the start), the first BENCH_RATE_WARMUP_SECONDS
 *   at the same rate left out (fresh connections' first requests and the step from the previous
 *   run's load: a few stalls of tens of ms that made a 10-second run's p99 by themselves; their
 *   count and slowest answer are in the per-run lines); each response's time from its
 *   due time to the end of its answer, so that the wait behind a stalled server counts for every
 *   request it delayed (no coordinated omission); the time from the write is in the per-run lines,
 *   and the requests due that no free connection carried before the end (not errors: the server was
 *   slower than the rate);
 *   (autocannon's `overallRate` sends each connection's share of a second back to back once a
 *   second: bursts that made the reference's own p99.9 tens of ms);
 * - event-loop delay: GET /metrics on the service's port once a second during each service run, for
 *   event_loop_delay_seconds{thread="redirect"|"clicks",quantile="0.99"|"1"} (each the service's
 *   last 1-second window); the largest per-second maximum and p99 of the run; n/a when absent. The
 *   reference measures its own loop with the service's src/Platform/LoopDelay.ts (same 10 ms
 *   resolution, same "late by" arithmetic) and sends each 1-second window over IPC, from a timer of
 *   its own (its request handler unchanged); a run keeps the windows that arrive during it, as the
 *   scrapes keep the service's. The targets' lines show the reference's figure beside the service's,
 *   to tell whether a bare server meets them on this machine;
 * - where the redirect thread's time went: the same scrapes (and one as the run starts) read the
 *   service's thread_runqueue_wait_seconds_total and thread_cpu_seconds_total{thread} (Linux's
 *   schedstat of each thread); their growth per second of the run, and the largest between two
 *   scrapes: a loop stall with run-queue wait and little CPU was a core taken by other work;
 * - CPU: utime + stime from /proc/<pid>/stat, of the server process (all its threads) and of every
 *   PostgreSQL process (the whole server: backends, checkpointer, background and WAL writers, and
 *   processes that exited, through the postmaster's children time), from the start of a run until
 *   the service reports all its clicks written (clicks_written_total >= redirects_total{status="301"};
 *   if that counter does not move, SELECT count(*) on clicks); per 100,000 redirects the server
 *   answered (its redirects_total for the service). PostgreSQL CPU counts every database on the
 *   server, so other work on it skews the figure (the per-role breakdown shows "other backends").
 *
 * The reference runs in a child process of its own, so that, like the service, it has an event loop
 * (and a core) to itself; the load generator is one autocannon worker thread, as in bench/api.
 *
 * Exit code 1 when the service does not start, any run saw an error, a timeout or a status other
 * than 301 (the reference's too), or the clicks recorded after the service's SIGTERM differ from the
 * redirects answered. The targets are printed PASS/FAIL but do NOT set the exit code: they depend on
 * the machine and on what else runs on it, while errors and lost clicks are bugs:
 * - at 10,000 req/s (else the first of BENCH_RATES): service p99 <= 1.5 x the reference's, p99.9 < 10 ms
 *   (the reference's p99.9 printed beside it);
 * - the redirect thread's event-loop delay below 5 ms in every second of every measured service run
 *   (the reference's worst second printed beside it);
 * - saturation: service/reference req/s >= 0.65, and every click stored once;
 * - PostgreSQL CPU per stored click <= 4.15 µs (half of a measured 8.3 µs).
 */
import { readdir, readFile } from "node:fs/promises"
import { request } from "node:http"
import { loadavg } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import pg from "pg"
import { benchDatabase } from "./support/BenchDatabase.ts"
import { type Cleanup, runProgram } from "./support/Cleanup.ts"
import {
  type LoopDelayWatch,
  loopWindows,
  mergeWatches,
  type Thread,
  type ThreadTimeSpan,
  watchEventLoop
} from "./support/EventLoopWatch.ts"
import { freePort } from "./support/FreePort.ts"
import { autocannonWithLatencies, type LatencySummary } from "./support/Latency.ts"
import { generatorOptions } from "./support/Load.ts"
import { pacedLoad } from "./support/PacedLoad.ts"
import { startRedirectReference } from "./support/RedirectReference.ts"
import { metricsOf, sample } from "./support/Metrics.ts"
import {
  cpuSecondsOf,
  machineDescription,
  type PostgresCpu,
  postgresCpuBetween,
  postgresSnapshot
} from "./support/ProcessCpu.ts"
import { requestJson, startAdminService } from "./support/Setup.ts"
import { formatTable } from "./support/Table.ts"

const DOMAIN = "bench.example"
const LINKS = 1000
const SETUP_CONCURRENCY = 8
const USER_AGENT =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
const targetOf = (n: number) => `https://example.com/landing/${n}?src=bench`
/**
 * Links of each smart-link scenario: as many as the plain links, whose clicks then cost PostgreSQL
 * the same (a click's rollup rows are its link's; over 100 links a batch of clicks updated a tenth
 * as many rows, about 7 µs of PostgreSQL a click against the plain links' 17-19 on a slow day, and
 * that work shares the two cores with the redirect thread).
 */
const SMART_LINKS = LINKS
/** 10 rules on device, language and country; the bench's visitor (desktop Chrome, en-US, 127.0.0.1) matches only the last. */
const rulesOf = (n: number) => {
  const to = (name: string) => `https://example.com/r${n}/${name}`
  return [
    { when: { device: ["mobile"] }, url: to("mobile") },
    { when: { device: ["tablet"] }, url: to("tablet") },
    { when: { language: ["fr"] }, url: to("fr") },
    { when: { language: ["de"] }, url: to("de") },
    { when: { country: ["FR"] }, url: to("fr-country") },
    { when: { country: ["DE", "AT", "CH"] }, url: to("dach") },
    { when: { device: ["mobile"], language: ["en"] }, url: to("mobile-en") },
    { when: { language: ["es", "pt"] }, url: to("es-pt") },
    { when: { country: ["US"], device: ["desktop"] }, url: to("us-desktop") },
    { when: { device: ["desktop"], language: ["en"] }, url: to("desktop-en") }
  ]
}
const variantsOf = (n: number) => [`https://example.com/ab${n}/a`, `https://example.com/ab${n}/b`]
const CACHE_CONTROL = "private, max-age=90"
/** Other processes' CPU during a run (the residue of the machine's busy time, kernel threads included), in cores, above which the run is flagged. */
const OTHERS_WARNING = 0.2
/** How long a service run's clicks may take to be written after it ends. */
const CLICKS_WAIT_MS = 60_000

const numberFromEnv = (name: string, fallback: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${raw}`)
  return value
}

const ratesFromEnv = (name: string, fallback: ReadonlyArray<number>) => {
  const raw = process.env[name]
  if (raw === undefined) return fallback
  return raw
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      const value = Number(part)
      if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must list positive integers (req/s), got ${raw}`)
      return value
    })
}

const seconds = numberFromEnv("BENCH_SECONDS", 10)
const warmUpSeconds = numberFromEnv("BENCH_WARMUP_SECONDS", 5)
const connections = Math.max(1, Math.round(numberFromEnv("BENCH_CONNECTIONS", 50)))
const rounds = Math.max(1, Math.round(numberFromEnv("BENCH_ROUNDS", 3)))
const rates = ratesFromEnv("BENCH_RATES", [10_000, 25_000])
const rateConnections = Math.max(1, Math.round(numberFromEnv("BENCH_RATE_CONNECTIONS", 100)))
const rateSeconds = numberFromEnv("BENCH_RATE_SECONDS", 10)
const rateWarmupSeconds = numberFromEnv("BENCH_RATE_WARMUP_SECONDS", 1)
const rateRounds = Math.max(1, Math.round(numberFromEnv("BENCH_RATE_ROUNDS", 3)))

const loadAverage = () => loadavg().map((n) => n.toFixed(2)).join(" ")

/** VmRSS and VmHWM (peak) of a process, in KiB. */
const memoryOf = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "")
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB$`, "m").exec(status)
    return match?.[1] === undefined ? undefined : Number(match[1])
  }
  return { rss: field("VmRSS"), peak: field("VmHWM") }
}

/** The machine's CPU time so far from /proc/stat, in ticks: busy (steal excluded), steal, and all. */
const machineTicks = async () => {
  const line = (await readFile("/proc/stat", "utf8").catch(() => "")).split("\n")[0] ?? ""
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.split(/\s+/).slice(1, 9).map(Number)
  const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0)
  return { busy, steal: steal ?? 0, all: busy + (steal ?? 0) + (idle ?? 0) + (iowait ?? 0) }
}

// ---------------------------------------------------------------------------------------------------
// The service's own numbers and the clicks in the database

/** One query on a connection of its own. */
const queryOnce = async <Row extends object>(databaseUrl: string, text: string) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    return (await client.query<Row>(text)).rows
  } finally {
    await client.end()
  }
}

const countClicks = async (databaseUrl: string) =>
  Number((await queryOnce<{ n: string }>(databaseUrl, "SELECT count(*) AS n FROM clicks"))[0]?.n ?? 0)

/** The service's redirects_total{status="301"}: every 301 it answered, in flight at a run's end too. */
const answeredByService = async (baseUrl: string) => sample(await metricsOf(baseUrl), "redirects_total", `status="301"`)

/**
 * Waits until the service has written a click for every 301 it answered: its clicks_written_total
 * reaches its redirects_total{status="301"} (no query, so PostgreSQL's CPU is not disturbed), or,
 * when that counter is absent or stands still for 3 s, SELECT count(*) FROM clicks does (whose CPU
 * PostgreSQL's figure then includes). How it ended, for the notes.
 */
const waitForClicks = async (baseUrl: string, databaseUrl: string | undefined) => {
  const started = Date.now()
  let lastWritten: number | undefined
  let lastProgress = started
  let counting = false
  while (Date.now() - started < CLICKS_WAIT_MS) {
    const samples = await metricsOf(baseUrl)
    const answered = sample(samples, "redirects_total", `status="301"`)
    if (answered === undefined) return { stored: false, note: "redirects_total{status=\"301\"} not in /metrics: did not wait" }
    if (!counting) {
      const written = sample(samples, "clicks_written_total")
      if (written !== undefined && written >= answered) {
        return { stored: true, note: `all written ${Date.now() - started} ms after the run (clicks_written_total)` }
      }
      if (written !== lastWritten) {
        lastWritten = written
        lastProgress = Date.now()
      } else if (Date.now() - lastProgress > 3000 && databaseUrl !== undefined) {
        counting = true
      }
    } else if (databaseUrl !== undefined && (await countClicks(databaseUrl)) >= answered) {
      return {
        stored: true,
        note: `all stored ${Date.now() - started} ms after the run (SELECT count(*) polls, in the PostgreSQL CPU)`
      }
    }
    await sleep(counting ? 500 : 100)
  }
  return { stored: false, note: `NOT all stored ${CLICKS_WAIT_MS / 1000} s after the run` }
}

/** The click flush histogram as one line: batches, mean, and the smallest bucket holding them all. */
const flushSummary = (samples: Map<string, number>) => {
  const count = sample(samples, "click_flush_seconds_count")
  const sum = sample(samples, "click_flush_seconds_sum")
  if (count === undefined || sum === undefined) return "click_flush_seconds not found in /metrics"
  const buckets = [...samples]
    .filter(([key]) => key.startsWith("click_flush_seconds_bucket"))
    .map(([key, value]) => ({ le: Number(/le="([^"]+)"/.exec(key)?.[1] ?? Number.NaN), value }))
    .sort((a, b) => a.le - b.le)
  const all = buckets.find((bucket) => bucket.value >= count)
  const over100ms = count - (buckets.find((bucket) => bucket.le === 0.1)?.value ?? count)
  return [
    `${count} batch writes`,
    `mean ${count === 0 ? "-" : ((sum / count) * 1000).toFixed(1)} ms`,
    `all <= ${all === undefined ? "?" : `${all.le} s`}`,
    `${over100ms} over 100 ms`
  ].join(", ")
}

/** The server's write-ahead log position, in bytes. */
const walPosition = async (databaseUrl: string) =>
  Number((await queryOnce<{ lsn: string }>(databaseUrl, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn"))[0]?.lsn)

/** What the click writer keeps, table by table (partitions and indexes included), in bytes. */
const CLICK_TABLES = [
  "clicks",
  "click_rollups",
  "click_rollups_hour",
  "click_rollups_user",
  "click_rollups_user_hour",
  "click_rollups_user_month",
  "click_rollups_link_month",
  "link_visitors",
  "user_agents"
] as const

const clickTableBytes = async (databaseUrl: string) => {
  const sizes = await queryOnce<{ name: string; bytes: string }>(
    databaseUrl,
    `SELECT t.name, (pg_total_relation_size(t.name::regclass)
              + coalesce((SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits WHERE inhparent = t.name::regclass), 0))::text AS bytes
     FROM unnest(ARRAY[${CLICK_TABLES.map((name) => `'${name}'`).join(", ")}]) AS t(name) WHERE to_regclass(t.name) IS NOT NULL`
  )
  return new Map(sizes.map((row) => [row.name, Number(row.bytes)]))
}

/** Bytes per stored click: of the WAL written while the clicks were, and of each table's growth. */
const storagePerClick = (
  clicks: number,
  wal: number,
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>
) => {
  const grown = [...after].map(([name, bytes]): [string, number] => [name, bytes - (before.get(name) ?? 0)])
  const total = grown.reduce((sum, [, bytes]) => sum + bytes, 0)
  const per = (bytes: number) => (clicks === 0 ? "?" : (bytes / clicks).toFixed(0))
  return (
    `storage per click (${clicks} clicks): WAL ${per(wal)} B (the whole server's, during the runs); on disk ${per(total)} B: ` +
    grown.map(([name, bytes]) => `${name} ${per(bytes)}`).join(", ")
  )
}

/** Lines left in spill files: clicks the service could not write to the database. */
const spilledLines = async (dataDir: string | undefined) => {
  if (dataDir === undefined) return 0
  const dir = join(dataDir, "clicks")
  const files = await readdir(dir).catch(() => [] as Array<string>)
  let lines = 0
  for (const file of files) {
    const text = await readFile(join(dir, file), "utf8").catch(() => "")
    lines += text.split("\n").filter((line) => line !== "").length
  }
  return lines
}

// ---------------------------------------------------------------------------------------------------
// Load

type Server = "reference" | "service"
type Kind = "warm-up" | "saturation" | "rate"
/** What a run loads: the reference, or the service's plain links, rules links or A/B links. */
type Scenario = "reference" | "plain" | "rules" | "ab" | "limited"
const SMART_SCENARIOS = ["rules", "ab", "limited"] as const
/** The click-limited links' limit: the largest accepted, never reached by a run. */
const UNREACHED_LIMIT = 1_000_000_000_000

interface Run {
  readonly server: Server
  readonly scenario: Scenario
  readonly label: string
  readonly kind: Kind
  /** Its round among the runs of its kind and rate (0: a warm-up). */
  readonly round: number
  /** The overall rate asked of autocannon (fixed-rate runs). */
  readonly rate: number | undefined
  readonly connections: number
  readonly requestsPerSecond: number
  /** Every response's latency at full precision (undefined when the recorder's data did not arrive). */
  readonly latency: LatencySummary | undefined
  /** Saturation: autocannon's own whole-ms percentiles; fixed rate: the latency from each request's write. */
  readonly otherLatency: string
  /** 301s autocannon counted (answers in flight when the run ends are not). */
  readonly redirects: number
  readonly unexpected: number
  readonly statuses: string
  readonly errors: number
  readonly timeouts: number
  /** The server's RSS at the end of the run, KiB. */
  readonly rssKiB: number | undefined
  /** The server's CPU use during the run, percent of one core. */
  readonly cpuPercent: number | undefined
  /** Where the CPU went during the run, for the notes under the table. */
  readonly cpuNote: string
  /** Redirects the server answered: the service's redirects_total{status="301"} growth, else autocannon's count. */
  readonly answered: number
  /** Server process CPU seconds from the start of the run until its clicks were stored. */
  readonly cpuSeconds: number | undefined
  /** The PostgreSQL server's CPU over the same span (service runs on a local PostgreSQL only). */
  readonly postgres: PostgresCpu | undefined
  /** Rows the run added to clicks (service runs on PostgreSQL only). */
  readonly stored: number | undefined
  /** How waiting for the clicks ended. */
  readonly storedNote: string
  /** The server's event-loop delay during the run (the reference's as its "redirect" thread). */
  readonly loop: LoopDelayWatch | undefined
  /** Signs of other work on the machine or on PostgreSQL during the run, if any. */
  readonly interference: string | undefined
}

// Every connection cycles over its scenario's aliases (autocannon's `requests` list, in order). Plain
// request objects, not setupRequest functions: those would have to be module files in worker mode,
// and building a request per call costs the generator CPU it shares with the servers on 2 cores.
const requestsOf = (prefix: string, count: number) => Array.from({ length: count }, (_, n) => ({ method: "GET" as const, path: `/${prefix}${n}` }))

interface Target {
  readonly server: Server
  readonly scenario: Scenario
  readonly requests: ReadonlyArray<{ readonly method: "GET"; readonly path: string }>
  readonly pid: number
  readonly baseUrl: string
  readonly host: string | undefined
  /** Starts watching the server's event-loop delay for one run. */
  readonly watchLoop: () => { readonly stop: () => Promise<LoopDelayWatch> }
}

interface RunSpec {
  readonly label: string
  readonly kind: Kind
  readonly round: number
  readonly duration: number
  readonly connections: number
  readonly rate?: number
}

/** Where the service's clicks go: the database (undefined for embedded PGlite) and its name. */
interface ClickStore {
  readonly databaseUrl: string | undefined
  readonly databaseName: string | undefined
}

/** What a load generator reports of one run, whichever generated it. */
interface Generated {
  readonly generator: string
  readonly statuses: Readonly<Record<string, number>>
  /** Answers before the measured part (a fixed rate's warm-up), by status: counted with the run's answers, in no figure. */
  readonly unmeasured: Readonly<Record<string, number>>
  readonly requestsPerSecond: number
  readonly latency: LatencySummary | undefined
  readonly otherLatency: string
  readonly errors: number
  readonly timeouts: number
  /** CPU seconds of a generator running in a process of its own (0 for autocannon's worker, counted with this process). */
  readonly childCpuSeconds: number
}

const HEADERS = {
  "user-agent": USER_AGENT,
  accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
  "accept-language": "en-US,en;q=0.9"
}

/** As fast as the connections go: autocannon, one request in flight per connection. */
const saturate = async (target: Target, spec: RunSpec): Promise<Generated> => {
  const { result, latency } = await autocannonWithLatencies({
    ...generatorOptions,
    url: target.baseUrl,
    connections: spec.connections,
    duration: spec.duration,
    headers: { ...HEADERS, ...(target.host === undefined ? {} : { host: target.host }) },
    requests: [...target.requests]
  })
  const byStatus = result.statusCodeStats as Record<string, { count: number } | undefined>
  const l = result.latency
  return {
    generator: "this process, autocannon worker",
    statuses: Object.fromEntries(Object.entries(byStatus).map(([status, entry]) => [status, entry?.count ?? 0])),
    unmeasured: {},
    requestsPerSecond: result.requests.average,
    latency,
    otherLatency: `autocannon ms p50 ${l.p50}, p99 ${l.p99}, p99.9 ${l.p99_9}, max ${l.max}`,
    errors: result.errors,
    timeouts: result.timeouts,
    childCpuSeconds: 0
  }
}

/**
 * A fixed rate, evenly spaced (support/PacedLoad.ts); the latency shown is from each request's due
 * time, so a stall of the server counts for every request that waited behind it.
 */
const pace = async (target: Target, spec: RunSpec, rate: number): Promise<Generated> => {
  const url = new URL(target.baseUrl)
  const paced = await pacedLoad({
    host: url.hostname,
    port: Number(url.port),
    hostHeader: target.host ?? url.host,
    headers: HEADERS,
    paths: target.requests.map((request) => request.path),
    rate,
    seconds: spec.duration,
    warmupSeconds: rateWarmupSeconds,
    connections: spec.connections,
    timeoutMs: 10_000
  })
  const w = paced.fromWrite
  return {
    generator: "paced child process",
    statuses: paced.statuses,
    unmeasured: paced.warmupStatuses,
    requestsPerSecond: paced.requestsPerSecond,
    latency: paced.fromDue,
    otherLatency:
      `from write ms p50 ${ms(w.p50)}, p99 ${ms(w.p99)}, p99.9 ${ms(w.p999)}, max ${ms(w.max)}${paced.unsent > 0 ? `; ${paced.unsent} due, never sent` : ""}` +
      `; warm-up (not measured) ${Object.values(paced.warmupStatuses).reduce((sum, n) => sum + n, 0)} answers, slowest ${ms(paced.warmupMaxMs)} ms from due`,
    // Requests the rate asked for that no free connection could carry before the end: the server was
    // slower than the rate (its req/s shows it), not wrong.
    errors: paced.errors,
    timeouts: paced.timeouts,
    childCpuSeconds: paced.generatorCpuSeconds
  }
}

const load = async (target: Target, spec: RunSpec, store: ClickStore): Promise<Run> => {
  const isService = target.server === "service"
  const countBefore = isService && store.databaseUrl !== undefined ? await countClicks(store.databaseUrl) : undefined
  const answeredBefore = isService ? await answeredByService(target.baseUrl) : undefined
  // Every run: PostgreSQL's CPU during it tells, with the servers' and the generator's, what other
  // processes took. Service runs: also the start of PostgreSQL's cost.
  const postgresBefore = await postgresSnapshot(store.databaseName)
  const watch = target.watchLoop()
  const cpuBefore = await cpuSecondsOf(target.pid)
  const machineBefore = await machineTicks()
  const generatorBefore = process.cpuUsage()
  const started = performance.now()
  const generated = spec.rate === undefined ? await saturate(target, spec) : await pace(target, spec, spec.rate)
  const { latency } = generated
  const elapsed = (performance.now() - started) / 1000
  const generator = process.cpuUsage(generatorBefore)
  const machineAfter = await machineTicks()
  const cpuAfterRun = await cpuSecondsOf(target.pid)
  const postgresAtEnd = await postgresSnapshot(store.databaseName)
  const loop = await watch.stop()
  const wait = isService ? await waitForClicks(target.baseUrl, store.databaseUrl) : { stored: true, note: "" }
  const cpuAfterStored = await cpuSecondsOf(target.pid)
  const postgresAfter = isService ? await postgresSnapshot(store.databaseName) : undefined
  const answeredAfter = isService ? await answeredByService(target.baseUrl) : undefined
  const countAfter = isService && store.databaseUrl !== undefined ? await countClicks(store.databaseUrl) : undefined

  const all = machineAfter.all - machineBefore.all
  const share = (ticks: number) => (all > 0 ? `${((ticks / all) * 100).toFixed(0)}%` : "?")
  const generatorSeconds = (generator.user + generator.system) / 1e6 + generated.childCpuSeconds
  const serverSeconds = cpuBefore === undefined || cpuAfterRun === undefined ? undefined : cpuAfterRun - cpuBefore
  const postgresRun = postgresCpuBetween(postgresBefore, postgresAtEnd)
  const postgresDuring = postgresRun?.seconds ?? 0
  // Machine ticks are 1/100 s of one core, like the processes'.
  const others = serverSeconds === undefined ? undefined : (machineAfter.busy - machineBefore.busy) / 100 - serverSeconds - generatorSeconds - postgresDuring
  const core = (cpuSeconds: number) => `${((cpuSeconds / elapsed) * 100).toFixed(0)}%`
  const otherDatabases = postgresRun?.byRole.get("other backends") ?? 0
  const otherDatabasesChurn = (postgresRun?.started.get("other backends") ?? 0) + (postgresRun?.exited.get("other backends") ?? 0)
  const interference = [
    ...(others !== undefined && others / elapsed > OTHERS_WARNING ? [`other processes ${core(others)} of a core`] : []),
    ...(otherDatabases > 0.05 || otherDatabasesChurn > 0
      ? [`PostgreSQL backends of other databases ${otherDatabases.toFixed(2)} s CPU, ${otherDatabasesChurn} started or exited`]
      : [])
  ]
  const { rss } = await memoryOf(target.pid)
  const byStatus: Record<string, number> = { ...generated.statuses }
  for (const [status, count] of Object.entries(generated.unmeasured)) byStatus[status] = (byStatus[status] ?? 0) + count
  const redirects = byStatus["301"] ?? 0
  const answers = Object.values(byStatus).reduce((sum, count) => sum + count, 0)
  return {
    server: target.server,
    scenario: target.scenario,
    label: spec.label,
    round: spec.round,
    kind: spec.kind,
    rate: spec.rate,
    connections: spec.rate === undefined ? spec.connections : Math.min(spec.connections, spec.rate),
    requestsPerSecond: generated.requestsPerSecond,
    latency,
    otherLatency: generated.otherLatency,
    redirects,
    unexpected: answers - redirects,
    statuses: Object.entries(byStatus)
      .map(([status, count]) => `${status}:${count}`)
      .join(" "),
    errors: generated.errors,
    timeouts: generated.timeouts,
    rssKiB: rss,
    cpuPercent: serverSeconds === undefined ? undefined : (serverSeconds / elapsed) * 100,
    cpuNote:
      `${target.server} ${serverSeconds === undefined ? "?" : core(serverSeconds)}, generator (${generated.generator}) ${core(generatorSeconds)}, ` +
      `PostgreSQL ${core(postgresDuring)}, other processes ${others === undefined ? "?" : core(others)} of a core; ` +
      `machine busy ${share(machineAfter.busy - machineBefore.busy)}, steal ${share(machineAfter.steal - machineBefore.steal)} of all cores`,
    answered:
      answeredBefore !== undefined && answeredAfter !== undefined ? answeredAfter - answeredBefore : redirects,
    cpuSeconds: cpuBefore === undefined || cpuAfterStored === undefined ? undefined : cpuAfterStored - cpuBefore,
    postgres:
      postgresAfter === undefined || store.databaseUrl === undefined
        ? undefined
        : postgresCpuBetween(postgresBefore, postgresAfter),
    stored: countBefore === undefined || countAfter === undefined ? undefined : countAfter - countBefore,
    storedNote: wait.note,
    loop,
    interference: interference.length === 0 ? undefined : interference.join(", ")
  }
}

/** One GET through node:http (fetch may not set Host), checked for the expected 301 and headers. */
const probe = (baseUrl: string, path: string, host: string | undefined, locations: ReadonlyArray<string>, cacheControl = CACHE_CONTROL) =>
  new Promise<void>((resolve, reject) => {
    const url = new URL(path, baseUrl)
    const req = request(
      url,
      { method: "GET", headers: { ...HEADERS, ...(host === undefined ? {} : { host }) } },
      (res) => {
        res.resume()
        res.once("end", () => {
          const problems = [
            res.statusCode === 301 ? undefined : `status ${res.statusCode}`,
            locations.includes(res.headers.location ?? "") ? undefined : `location ${res.headers.location}`,
            res.headers["cache-control"] === cacheControl ? undefined : `cache-control ${res.headers["cache-control"]}`
          ].filter((problem) => problem !== undefined)
          if (problems.length === 0) resolve()
          else reject(new Error(`GET ${path} (Host ${host ?? url.host}) answered ${problems.join(", ")}`))
        })
      }
    )
    req.once("error", reject)
    req.end()
  })

// ---------------------------------------------------------------------------------------------------
// Figures

/** The id of the first object of an answer (a domain, a link). */
const idOf = (json: unknown): number => {
  const objects = typeof json === "object" && json !== null && "objects" in json ? json.objects : undefined
  const first: unknown = Array.isArray(objects) ? objects[0] : undefined
  if (typeof first === "object" && first !== null && "id" in first && typeof first.id === "number") return first.id
  throw new Error(`no id in ${JSON.stringify(json).slice(0, 500)}`)
}

const median = (runs: ReadonlyArray<Run>): Run | undefined => {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)
  return sorted[Math.floor(sorted.length / 2)]
}

/** The sum of a figure over runs; undefined when any run lacks it. */
const sumOf = (runs: ReadonlyArray<Run>, figure: (run: Run) => number | undefined) =>
  runs.reduce<number | undefined>((sum, run) => {
    const value = figure(run)
    return sum === undefined || value === undefined ? undefined : sum + value
  }, 0)

/** What several runs of one server cost together. */
interface Cost {
  readonly answered: number
  readonly cpuSeconds: number | undefined
  readonly postgresSeconds: number | undefined
  readonly stored: number | undefined
  readonly loop: LoopDelayWatch | undefined
}

const costOf = (runs: ReadonlyArray<Run>): Cost => {
  const watches = runs.flatMap((run) => (run.loop === undefined ? [] : [run.loop]))
  return {
    answered: runs.reduce((sum, run) => sum + run.answered, 0),
    cpuSeconds: sumOf(runs, (run) => run.cpuSeconds),
    postgresSeconds: sumOf(runs, (run) => run.postgres?.seconds),
    stored: sumOf(runs, (run) => run.stored),
    loop: watches.length === 0 ? undefined : mergeWatches(watches)
  }
}

const mib = (kib: number | undefined) => (kib === undefined ? "?" : (kib / 1024).toFixed(1))
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL")
/** ms with sub-millisecond digits; n/a when unknown. */
const ms = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? "n/a" : value.toFixed(2))
const per100k = (seconds: number | undefined, answered: number) =>
  seconds === undefined || answered === 0 ? "n/a" : ((seconds / answered) * 100_000).toFixed(2)
const microsPerClick = (seconds: number | undefined, clicks: number | undefined) =>
  seconds === undefined || clicks === undefined || clicks === 0 ? undefined : (seconds / clicks) * 1e6
/** A thread's time per second of the span, in ms. */
const perSecond = (time: ThreadTimeSpan | undefined, figure: "cpu" | "runQueueWait") =>
  time === undefined ? "n/a" : ((time[figure] / time.span) * 1000).toFixed(1)
const waitFigure = (time: ThreadTimeSpan | undefined) =>
  time === undefined ? "n/a" : `${perSecond(time, "runQueueWait")} (${(time.worstWait * 1000).toFixed(1)})`
const loopFigure = (loop: LoopDelayWatch | undefined, thread: Thread, figure: "max" | "p99") =>
  loop === undefined ? "-" : ms(loop.threads[thread][figure])
/** Process counts by role, e.g. "2 (bench database 2)", or "0". */
const churn = (counts: ReadonlyMap<string, number>) => {
  const total = [...counts.values()].reduce((sum, n) => sum + n, 0)
  return total === 0 ? "0" : `${total} (${[...counts].map(([role, n]) => `${role} ${n}`).join(", ")})`
}
const requestRate = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : "n/a")

// ---------------------------------------------------------------------------------------------------

const run = async (cleanup: Cleanup): Promise<number> => {
  process.stdout.write(`${await machineDescription()}\n`)
  const database = await benchDatabase(cleanup)
  const { service, api, token } = await startAdminService(cleanup, database.env)
  const domainId = idOf((await requestJson("POST", `${api}/domains`, { token, body: { domain: DOMAIN } })).json)
  const setupStarted = Date.now()
  let next = 0
  await Promise.all(
    Array.from({ length: SETUP_CONCURRENCY }, async () => {
      for (let n = next++; n < LINKS; n = next++) {
        await requestJson("POST", `${api}/${domainId}/links`, {
          token,
          body: { url: targetOf(n), alias: `l${n}`, override_404_check: 1 }
        })
      }
    })
  )
  await Promise.all(
    Array.from({ length: SETUP_CONCURRENCY }, async (_, worker) => {
      for (let n = worker; n < SMART_LINKS; n += SETUP_CONCURRENCY) {
        for (const [alias, settings] of [
          [`r${n}`, { rules: rulesOf(n) }],
          [`ab${n}`, { split: variantsOf(n).map((url) => ({ url, weight: 50 })) }],
          [`c${n}`, { max_clicks: UNREACHED_LIMIT }]
        ] as const) {
          const created = await requestJson("POST", `${api}/${domainId}/links`, {
            token,
            body: { url: targetOf(n), alias, override_404_check: 1 }
          })
          await requestJson("PUT", `${api}/${domainId}/links/${idOf(created.json)}/settings`, { token, body: settings })
        }
      }
    })
  )
  const setupMs = Date.now() - setupStarted
  const referenceLoop = loopWindows()
  const reference = await startRedirectReference(
    cleanup,
    await freePort(),
    { location: targetOf(1), "cache-control": CACHE_CONTROL },
    { onLoopDelay: referenceLoop.add }
  )

  // One request each before the load: the right answer, not just a 301. The service's probe is a GET,
  // so it records a click too.
  await probe(service.baseUrl, "/l42", DOMAIN, [targetOf(42)])
  await probe(service.baseUrl, "/r42", DOMAIN, [rulesOf(42).at(-1)!.url])
  await probe(service.baseUrl, "/ab42", DOMAIN, variantsOf(42))
  // A click-limited link's redirect is not kept by browsers: every visit is counted.
  await probe(service.baseUrl, "/c42", DOMAIN, [targetOf(42)], "no-store")
  await probe(reference.baseUrl, "/l42", undefined, [targetOf(1)])
  const probeClicks = 4
  const setupMemory = await memoryOf(service.pid)

  const databaseUrl = database.env.DATABASE_URL
  const store: ClickStore = {
    databaseUrl,
    databaseName: databaseUrl === undefined ? undefined : new URL(databaseUrl).pathname.slice(1)
  }
  process.stdout.write(
    [
      `Redirect benchmark: database ${database.kind}`,
      `reference: bare node:http in a separate child process; load: autocannon ${JSON.stringify(generatorOptions)}, ` +
        `GET /l0../l${LINKS - 1} in turn (Host ${DOMAIN} for the service)`,
      `saturation: ${connections} connections, ${seconds} s per run, ${rounds} round(s) after a ${warmUpSeconds} s warm-up of each server`,
      `fixed rate: ${rates.length === 0 ? "none" : rates.map((rate) => `${rate}`).join(", ")} req/s, ` +
        `${rateConnections} connections, ${rateSeconds} s per run after ${rateWarmupSeconds} s at the rate not measured, ${rateRounds} round(s) of the reference then the service at each`,
      `smart-link scenarios: ${SMART_LINKS} links with 10 rules (/r0..), ${SMART_LINKS} A/B links (/ab0..), ${SMART_LINKS} click-limited links (/c0..); ` +
        `after the reference, the order of plain, rules, ab, limited rotates by one each round`,
      `setup: 1 domain and ${LINKS + SMART_SCENARIOS.length * SMART_LINKS} links created in ${(setupMs / 1000).toFixed(1)} s (${SETUP_CONCURRENCY} at a time); ` +
        `service RSS after setup ${mib(setupMemory.rss)} MiB`,
      `load average before: ${loadAverage()}`
    ].join("\n") + "\n\n"
  )

  const storedBefore =
    databaseUrl === undefined
      ? undefined
      : { clicks: await countClicks(databaseUrl), wal: await walPosition(databaseUrl), tables: await clickTableBytes(databaseUrl) }
  const plainRequests = requestsOf("l", LINKS)
  const referenceTarget: Target = {
    server: "reference",
    scenario: "reference",
    requests: plainRequests,
    pid: reference.pid,
    baseUrl: reference.baseUrl,
    host: undefined,
    watchLoop: referenceLoop.watch
  }
  const serviceTarget: Target = {
    server: "service",
    scenario: "plain",
    requests: plainRequests,
    pid: service.pid,
    baseUrl: service.baseUrl,
    host: DOMAIN,
    watchLoop: () => watchEventLoop(service.baseUrl)
  }
  const smartTargets: ReadonlyArray<Target> = [
    { ...serviceTarget, scenario: "rules", requests: requestsOf("r", SMART_LINKS) },
    { ...serviceTarget, scenario: "ab", requests: requestsOf("ab", SMART_LINKS) },
    { ...serviceTarget, scenario: "limited", requests: requestsOf("c", SMART_LINKS) }
  ]
  const runs: Array<Run> = []
  const saturation = (label: string, kind: Kind, duration: number, round = 0): RunSpec => ({ label, kind, round, duration, connections })
  if (warmUpSeconds > 0) {
    process.stderr.write("warming up the reference, then the service...\n")
    runs.push(await load(referenceTarget, saturation("reference warm-up", "warm-up", warmUpSeconds), store))
    runs.push(await load(serviceTarget, saturation("service warm-up", "warm-up", warmUpSeconds), store))
    for (const target of smartTargets) runs.push(await load(target, saturation(`${target.scenario} warm-up`, "warm-up", warmUpSeconds), store))
  }
  // Round n starts at the n-th scenario (cyclically): no scenario always runs first,
  // right after the reference, or last, behind the clicks of all the others.
  const serviceTargets = [serviceTarget, ...smartTargets]
  const rotated = (index: number) => {
    const start = index % serviceTargets.length
    return [...serviceTargets.slice(start), ...serviceTargets.slice(0, start)]
  }
  const orderOf = (targets: ReadonlyArray<Target>) => targets.map((target) => target.scenario).join(", ")
  /** A service run's label: "service" for the plain links, else the scenario. */
  const nameOf = (target: Target) => (target.scenario === "plain" ? "service" : target.scenario)
  for (let round = 1; round <= rounds; round++) {
    const order = rotated(round - 1)
    process.stderr.write(`round ${round} of ${rounds}: reference, then ${orderOf(order)}...\n`)
    runs.push(await load(referenceTarget, saturation(`reference round ${round}`, "saturation", seconds, round), store))
    for (const target of order) runs.push(await load(target, saturation(`${nameOf(target)} round ${round}`, "saturation", seconds, round), store))
  }
  let rotation = 0
  for (const rate of rates) {
    for (let round = 1; round <= rateRounds; round++) {
      const order = rotated(rotation++)
      const suffix = rateRounds > 1 ? ` round ${round}` : ""
      process.stderr.write(`${rate} req/s${suffix}: reference, then ${orderOf(order)}...\n`)
      const spec = (name: string): RunSpec => ({
        label: `${name} at ${rate} req/s${suffix}`,
        kind: "rate",
        round,
        duration: rateSeconds,
        connections: rateConnections,
        rate
      })
      runs.push(await load(referenceTarget, spec("reference"), store))
      for (const target of order) runs.push(await load(target, spec(nameOf(target)), store))
    }
  }
  const referenceMemory = await memoryOf(reference.pid)
  const serviceMemory = await memoryOf(service.pid)
  const samples = await metricsOf(service.baseUrl)

  // The saturation rounds, as before.
  const rounded = runs.filter((r) => r.kind === "saturation")
  const bareRuns = rounded.filter((r) => r.server === "reference")
  const serviceRuns = rounded.filter((r) => r.scenario === "plain")
  const bare = median(bareRuns)
  const served = median(serviceRuns)
  const ratio = bare === undefined || served === undefined ? Number.NaN : served.requestsPerSecond / bare.requestsPerSecond

  const roundRow = (r: Run, name: string, vs: string) => [
    name,
    String(r.connections),
    requestRate(r.requestsPerSecond),
    ms(r.latency?.p50),
    ms(r.latency?.p99),
    ms(r.latency?.p999),
    String(r.unexpected),
    `${r.errors}/${r.timeouts}`,
    mib(r.rssKiB),
    r.cpuPercent === undefined ? "?" : r.cpuPercent.toFixed(0),
    vs
  ]
  const roundRows = rounded.map((r) => {
    const partner = bareRuns.find((b) => b.round === r.round)
    const vs = r.server === "reference" ? "reference" : partner === undefined ? "?" : (r.requestsPerSecond / partner.requestsPerSecond).toFixed(3)
    return roundRow(r, r.label, vs)
  })
  if (bare !== undefined) roundRows.push(roundRow(bare, "reference node:http 301 (median)", "reference"))
  if (served !== undefined) roundRows.push(roundRow(served, "service GET /<alias> (median)", ratio.toFixed(3)))
  process.stdout.write(
    "saturation rounds\n" +
      formatTable(
        ["scenario", "conns", "req/s", "p50 ms", "p99 ms", "p99.9 ms", "not 301", "errors/timeouts", "RSS MiB", "CPU %", "service/reference"],
        roundRows
      ) +
      "\n\n"
  )

  // The summary: one row per run kind. Saturation: the median round's speed and latency, the cost of
  // all rounds together.
  interface Kindred {
    readonly name: string
    readonly server: Server
    readonly shown: Run
    readonly cost: Cost
  }
  const kinds: Array<Kindred> = []
  if (bare !== undefined) kinds.push({ name: "saturation reference", server: "reference", shown: bare, cost: costOf(bareRuns) })
  if (served !== undefined) kinds.push({ name: "saturation service", server: "service", shown: served, cost: costOf(serviceRuns) })
  for (const scenario of SMART_SCENARIOS) {
    const own = rounded.filter((r) => r.scenario === scenario)
    const middle = median(own)
    if (middle !== undefined) kinds.push({ name: `saturation ${scenario}`, server: "service", shown: middle, cost: costOf(own) })
  }
  for (const r of runs.filter((r) => r.kind === "rate")) {
    const round = rateRounds > 1 ? ` round ${r.round}` : ""
    kinds.push({ name: `rate ${r.rate} ${r.scenario === "plain" ? "service" : r.scenario}${round}`, server: r.server, shown: r, cost: costOf([r]) })
  }
  process.stdout.write(
    "summary: speed and latency (saturation: the median round)\n" +
      formatTable(
        [
          "run",
          "conns",
          "asked req/s",
          "req/s",
          "p50 ms",
          "p99 ms",
          "p99.9 ms",
          "max ms",
          "1st answers max ms",
          "not 301",
          "errors/timeouts",
          "busiest 100 ms req/s",
          "quietest 100 ms req/s"
        ],
        kinds.map(({ name, shown: r }) => [
          name,
          String(r.connections),
          r.rate === undefined ? "max" : String(r.rate),
          requestRate(r.requestsPerSecond),
          ms(r.latency?.p50),
          ms(r.latency?.p99),
          ms(r.latency?.p999),
          ms(r.latency?.max),
          ms(r.latency?.firstMax),
          String(r.unexpected),
          `${r.errors}/${r.timeouts}`,
          requestRate(r.latency?.busiest100ms ?? Number.NaN),
          requestRate(r.latency?.quietest100ms ?? Number.NaN)
        ])
      ) +
      "\n\n" +
      "summary: event-loop delay and cost (saturation: all rounds together)\n" +
      formatTable(
        [
          "run",
          "redirect loop max ms",
          "redirect loop p99 ms",
          "redirect run-queue wait ms/s (worst 1 s, ms)",
          "redirect CPU ms/s",
          "clicks loop max ms",
          "clicks loop p99 ms",
          "server CPU s/100k",
          "PG CPU s/100k",
          "PG µs/click",
          "clicks stored/answered"
        ],
        kinds.map(({ name, server, cost }) => [
          name,
          loopFigure(cost.loop, "redirect", "max"),
          loopFigure(cost.loop, "redirect", "p99"),
          server === "reference" ? "-" : waitFigure(cost.loop?.threads.redirect.time),
          server === "reference" ? "-" : perSecond(cost.loop?.threads.redirect.time, "cpu"),
          server === "reference" ? "-" : loopFigure(cost.loop, "clicks", "max"),
          server === "reference" ? "-" : loopFigure(cost.loop, "clicks", "p99"),
          per100k(cost.cpuSeconds, cost.answered),
          server === "reference" ? "-" : per100k(cost.postgresSeconds, cost.answered),
          server === "reference" ? "-" : ms(microsPerClick(cost.postgresSeconds, cost.stored)),
          server === "reference" ? "-" : `${cost.stored ?? "?"}/${cost.answered}`
        ])
      ) +
      "\n\n"
  )
  process.stdout.write(
    [
      "notes:",
      "  latency, saturation: each response's time from its request's write to the end of its answer, in ms at full",
      "    precision (autocannon's whole-ms figures are in the per-run lines). Each connection's first answer is left out",
      "    of the percentiles and max: it includes the TCP connect (\"1st answers max\": the slowest of them).",
      "  latency, fixed rate: requests evenly spaced (each millisecond sends what fell due), timed from when each was due",
      "    to the end of its answer: a stall delays every request behind it and counts for each (no coordinated",
      "    omission). The time from the write is in the per-run lines, with the requests that fell due but found no",
      "    free connection before the end (a server slower than the rate): not errors, its req/s shows the shortfall.",
      "  event-loop delay: the service's event_loop_delay_seconds gauges (each its last 1-second window), scraped from",
      "    /metrics once a second during each service run: the largest per-second max (quantile 1) and p99; n/a: absent.",
      "    The reference's: its own 1-second windows, measured by the service's code (src/Platform/LoopDelay.ts), over IPC.",
      "    The lowest per-second p50 (per-run lines) is the gauge's floor: node's monitorEventLoopDelay records the whole",
      "    interval between its timer's ticks, its resolution included (about 10 ms on an idle loop at resolution 10).",
      "  run-queue wait: the growth of the service's thread_runqueue_wait_seconds_total{thread} (time runnable, waiting for",
      "    a core) over the run, per second, and in parentheses the largest growth between two consecutive scrapes, in ms",
      "    (1 s apart: one of the service's once-a-second updates, sometimes none or two when a stall delays one); CPU ms/s",
      "    likewise from thread_cpu_seconds_total. A loop stall with much wait and little CPU was other work holding the",
      "    cores, not the service's code.",
      "  CPU: utime+stime of the server process (all threads), and of the whole PostgreSQL server (every process, exited",
      "    ones included), from the start of each run until the service had written its clicks; per 100,000 redirects",
      "    answered (the service's redirects_total{status=\"301\"}; autocannon's 301 count for the reference).",
      "",
      "per run (status codes; CPU during the run, in % of one core; autocannon's whole-ms latency; event-loop scrapes; clicks; PostgreSQL CPU by role):",
      ...runs.map((r) => {
        const details = [
          `${r.statuses || "none"}`,
          r.cpuNote,
          r.otherLatency,
          ...(r.latency === undefined ? ["full-precision latencies MISSING (recorder data did not arrive)"] : []),
          ...(r.loop === undefined
            ? []
            : r.server === "reference"
              ? [
                  `event-loop delay ms: max ${ms(r.loop.threads.redirect.max)} p99 ${ms(r.loop.threads.redirect.p99)} ` +
                    `lowest p50 ${ms(r.loop.threads.redirect.p50Min)} (${r.loop.threads.redirect.windows} windows over IPC)`
                ]
              : [
                `event-loop delay ms: redirect max ${ms(r.loop.threads.redirect.max)} p99 ${ms(r.loop.threads.redirect.p99)} ` +
                  `lowest p50 ${ms(r.loop.threads.redirect.p50Min)} ` +
                  `(run-queue wait ms/s ${waitFigure(r.loop.threads.redirect.time)}, CPU ms/s ${perSecond(r.loop.threads.redirect.time, "cpu")}), ` +
                  `clicks max ${ms(r.loop.threads.clicks.max)} p99 ${ms(r.loop.threads.clicks.p99)} ` +
                  `lowest p50 ${ms(r.loop.threads.clicks.p50Min)} ` +
                  `(run-queue wait ms/s ${waitFigure(r.loop.threads.clicks.time)}, CPU ms/s ${perSecond(r.loop.threads.clicks.time, "cpu")}) ` +
                  `(${r.loop.scrapes} scrapes, ${r.loop.threads.redirect.windows} with the redirect gauge, ${r.loop.threads.clicks.windows} with the clicks gauge)`,
                ...(r.loop.clickLimits === undefined || r.loop.clickLimits.visits === 0
                  ? []
                  : [
                      `click-limit counter: ${r.loop.clickLimits.visits} visits, ${r.loop.clickLimits.roundTrips} round trips, ` +
                        `${r.loop.clickLimits.waits} visits waited for one`
                    ])
              ]),
          ...(r.server === "service"
            ? [
                `answered ${r.answered}, stored ${r.stored ?? "?"}: ${r.storedNote}`,
                r.postgres === undefined
                  ? "PostgreSQL CPU n/a"
                  : `PostgreSQL CPU ${r.postgres.seconds.toFixed(2)} s (` +
                    [...r.postgres.byRole]
                      .filter(([, s]) => s !== 0)
                      .map(([role, s]) => `${role} ${s.toFixed(2)}`)
                      .join(", ") +
                    `; processes started ${churn(r.postgres.started)}, exited ${churn(r.postgres.exited)})`,
                `service CPU ${r.cpuSeconds === undefined ? "?" : r.cpuSeconds.toFixed(2)} s until stored`
              ]
            : [])
        ]
        return `  ${r.label}: ${details.join("; ")}`
      }),
      `RSS at the end (peak): reference ${mib(referenceMemory.rss)} MiB (${mib(referenceMemory.peak)}), ` +
        `service ${mib(serviceMemory.rss)} MiB (${mib(serviceMemory.peak)})`,
      `service click flushes: ${flushSummary(samples)}; spilled ${sample(samples, "clicks_spilled_total") ?? 0}`,
      ""
    ].join("\n") + "\n"
  )

  // Clicks. autocannon drops the answers still in flight when a run ends, so its 301 count can be
  // below what the service answered (and enqueued clicks for) by up to one per connection per run;
  // the service's redirects_total{status="301"} counts every one. The clicks must equal the latter,
  // and can never be fewer than the former.
  const serviceAll = runs.filter((r) => r.server === "service")
  const counted = serviceAll.reduce((sum, r) => sum + r.redirects, 0) + probeClicks
  const inFlightSlack = serviceAll.reduce((sum, r) => sum + r.connections, 0)
  const answered = sample(samples, "redirects_total", `status="301"`)
  const answeredOk = answered !== undefined && answered >= counted && answered <= counted + inFlightSlack
  process.stdout.write(
    `redirects answered: ${counted} counted by autocannon (warm-up + runs + 1 probe), ` +
      `${answered ?? "?"} by the service's redirects_total{status="301"}` +
      `${answeredOk ? "" : " (INCONSISTENT: expected between the two bounds)"}\n`
  )
  let clicksLost = false
  let clicksVerdict = "skipped (embedded)"
  if (databaseUrl === undefined) {
    process.stdout.write("clicks recorded vs redirects answered: skipped (embedded PGlite lives in the service process)\n")
  } else {
    const written = sample(samples, "clicks_written_total") ?? 0
    const stopping = Date.now()
    const exit = await service.stop()
    const stopMs = Date.now() - stopping
    const recorded = await countClicks(databaseUrl)
    const spilled = await spilledLines(database.env.DATA_DIR)
    // Without a usable service count the autocannon count is the reference, with its in-flight slack.
    const equal =
      answered !== undefined && answeredOk
        ? recorded === answered
        : recorded >= counted && recorded <= counted + inFlightSlack
    clicksLost = !equal
    clicksVerdict = `${recorded} stored, ${answered ?? "?"} answered ${verdict(equal)}`
    process.stdout.write(
      [
        `service stopped by SIGTERM in ${stopMs} ms (${exit}); clicks not yet written shortly before: ` +
          `${answered === undefined ? "?" : answered - written}`,
        `clicks recorded: ${recorded} rows in clicks; redirects answered: ${answered ?? "?"} ` +
          `(${counted} seen by autocannon) -> ${equal ? "equal" : `MISMATCH (${recorded - (answered ?? counted)})`}`,
        `clicks left in spill files: ${spilled}`,
        ...(storedBefore === undefined
          ? []
          : [
              storagePerClick(
                recorded - storedBefore.clicks,
                (await walPosition(databaseUrl)) - storedBefore.wal,
                storedBefore.tables,
                await clickTableBytes(databaseUrl)
              )
            ])
      ].join("\n") + "\n"
    )
  }

  // Targets. Every comparison pairs the runs of one round (neighbours in time, so a machine that
  // slows down between rounds slows both) and takes the median over the rounds, each round's shown.
  const rateForTarget = rates.includes(10_000) ? 10_000 : rates[0]
  const atTargetRate = (pick: (r: Run) => boolean) => runs.filter((r) => r.kind === "rate" && r.rate === rateForTarget && pick(r))
  const middleOf = (values: ReadonlyArray<number>) => {
    const sorted = [...values].sort((a, b) => a - b)
    if (sorted.length === 0) return undefined
    const half = sorted.length / 2
    return sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2] : (sorted[half - 1]! + sorted[half]!) / 2
  }
  /** The median over the rounds of `figure(of) / figure(against)`, the two runs of each round paired. */
  const pairedRatio = (of: ReadonlyArray<Run>, against: ReadonlyArray<Run>, figure: (r: Run) => number | undefined) => {
    const ratios = of.flatMap((r) => {
      const partner = against.find((a) => a.round === r.round)
      const mine = figure(r)
      const theirs = partner === undefined ? undefined : figure(partner)
      return mine === undefined || theirs === undefined || theirs === 0 ? [] : [mine / theirs]
    })
    const median = middleOf(ratios)
    const each = ratios.length > 1 ? ` (median over the rounds of ${ratios.map((v) => v.toFixed(3)).join(", ")})` : ""
    return { median, text: `${median === undefined ? "n/a" : median.toFixed(3)}${each}` }
  }
  /** The median over the rounds of a run's p99 (p99.9), every round's shown. */
  const tail = (of: ReadonlyArray<Run>, figure: "p99" | "p999") => {
    const values = of.flatMap((r) => (r.latency === undefined ? [] : [r.latency[figure]]))
    const median = middleOf(values)
    const each = values.length > 1 ? ` (median of ${values.map((v) => ms(v)).join(", ")})` : ""
    return { median, text: `${ms(median)} ms${each}` }
  }
  const p99 = (r: Run) => r.latency?.p99
  const speed = (r: Run) => r.requestsPerSecond
  const rateReference = atTargetRate((r) => r.server === "reference")
  const rateService = atTargetRate((r) => r.scenario === "plain")
  const smartLines = SMART_SCENARIOS.flatMap((scenario) => {
    const throughput = pairedRatio(rounded.filter((r) => r.scenario === scenario), serviceRuns, speed)
    const atRate = pairedRatio(atTargetRate((r) => r.scenario === scenario), rateService, p99)
    return [
      `  ${scenario}: saturation req/s >= 0.9 x the plain links': ${throughput.text} ` +
        (throughput.median === undefined ? "n/a" : verdict(throughput.median >= 0.9)),
      `  ${scenario}: p99 at ${rateForTarget ?? "-"} req/s <= 1.2 x the plain links': ${atRate.text} ` +
        (atRate.median === undefined ? "n/a" : verdict(atRate.median <= 1.2))
    ]
  })
  const saturationRatio = pairedRatio(serviceRuns, bareRuns, speed)
  const rateLines =
    rateReference.length === 0 || rateService.length === 0
      ? ["  fixed-rate targets: n/a (no fixed-rate runs)"]
      : (() => {
          const ratioToReference = pairedRatio(rateService, rateReference, p99)
          const own = tail(rateService, "p99")
          const ref = tail(rateReference, "p99")
          const own999 = tail(rateService, "p999")
          const ref999 = tail(rateReference, "p999")
          return [
            `  at ${rateForTarget} req/s: service p99 <= 1.5 x reference p99: ${ratioToReference.text} x ` +
              (ratioToReference.median === undefined ? "n/a" : verdict(ratioToReference.median <= 1.5)) +
              `; p99 service ${own.text}, reference ${ref.text}`,
            `  at ${rateForTarget} req/s: service p99.9 < 10 ms: ${own999.text} ${own999.median === undefined ? "n/a" : verdict(own999.median < 10)}` +
              `; the bare reference in the same run: ${ref999.text}`
          ]
        })()
  const measuredService = runs.filter((r) => r.server === "service" && r.kind !== "warm-up")
  const measuredReference = runs.filter((r) => r.server === "reference" && r.kind !== "warm-up")
  const worstLoopOf = (measured: ReadonlyArray<Run>) =>
    measured.reduce<{ max: number | undefined; label: string; windows: number }>(
      (worst, r) => {
        const max = r.loop?.threads.redirect.max
        const windows = worst.windows + (r.loop?.threads.redirect.windows ?? 0)
        return max !== undefined && (worst.max === undefined || max > worst.max) ? { max, label: r.label, windows } : { ...worst, windows }
      },
      { max: undefined, label: "", windows: 0 }
    )
  const worstLoop = worstLoopOf(measuredService)
  const referenceLoopWorst = worstLoopOf(measuredReference)
  const allCost = costOf(measuredService)
  const perClick = microsPerClick(allCost.postgresSeconds, allCost.stored)
  const warmLoop = runs.find((r) => r.server === "service" && r.kind === "warm-up")?.loop?.threads.redirect.max
  const disturbed = runs.filter((r) => r.interference !== undefined)
  process.stdout.write(
    [
      "",
      ...(disturbed.length === 0
        ? ["no other work seen on the machine or on PostgreSQL during the runs"]
        : [
            "WARNING: other work ran beside the bench (its figures are skewed):",
            ...disturbed.map((r) => `  ${r.label}: ${r.interference}`)
          ]),
      "",
      "targets (reported only; they do not set the exit code, errors and lost clicks do):",
      ...rateLines,
      `  redirect thread event-loop delay max < 5 ms in every measured service run: ` +
        (worstLoop.max === undefined
          ? `n/a (no event_loop_delay_seconds{thread="redirect"} in /metrics)`
          : `${ms(worstLoop.max)} ms (${worstLoop.label}; ${worstLoop.windows} one-second windows; warm-up ${ms(warmLoop)} ms, not counted) ` +
            verdict(worstLoop.max < 5)) +
        `; the bare reference in the same run: ` +
        (referenceLoopWorst.max === undefined
          ? "n/a"
          : `${ms(referenceLoopWorst.max)} ms (${referenceLoopWorst.label}; ${referenceLoopWorst.windows} one-second windows)`),
      `  saturation service/reference req/s >= 0.65: ${saturationRatio.text} ` +
        (saturationRatio.median === undefined ? "n/a" : verdict(saturationRatio.median >= 0.65)),
      ...smartLines,
      `  every click stored once (stored == answered, after SIGTERM): ${clicksVerdict}`,
      `  PostgreSQL CPU per stored click <= 4.15 µs: ` +
        (perClick === undefined
          ? "n/a (no local PostgreSQL server measured)"
          : `${perClick.toFixed(2)} µs (all measured service runs: ${allCost.postgresSeconds?.toFixed(2)} s for ${allCost.stored} clicks) ` +
            verdict(perClick <= 4.15)),
      `load average after: ${loadAverage()}`
    ].join("\n") + "\n"
  )

  const broken = runs.filter((r) => r.errors > 0 || r.timeouts > 0 || r.unexpected > 0)
  for (const r of broken) process.stderr.write(`FAILED: ${r.label} had errors, timeouts or statuses other than 301\n`)
  if (clicksLost) process.stderr.write("FAILED: the clicks recorded differ from the redirects answered\n")
  return broken.length > 0 || clicksLost ? 1 : 0
}

runProgram("bench", run)
