/**
 * Load benchmark of the redirect hot path (`GET /<alias>` on a registered domain) of the real server
 * process, beside a bare node:http reference answering the same 301 without any lookup, loaded with
 * the same autocannon settings in the same run. `npm run bench:redirect`.
 *
 * BENCH_SECONDS (default 10) sets the length of each measured run, BENCH_WARMUP_SECONDS (default 5)
 * the warm-up of each server before its first run, BENCH_CONNECTIONS (default 50) the connections,
 * BENCH_ROUNDS (default 3) how many times the reference and service runs alternate: the table shows
 * every run and the median of each, since other work on a small machine skews single runs.
 * PostgreSQL when BENCH_DATABASE_URL or DATABASE_URL is set (a fresh database, dropped at the end),
 * else embedded PGlite.
 *
 * The reference runs in a child process of its own, so that, like the service, it has an event loop
 * (and a core) to itself; the load generator is one autocannon worker thread, as in bench/api.
 *
 * After the load the service is stopped with SIGTERM (it writes the clicks still queued before it
 * exits) and the rows of `clicks` are compared with the 301s it answered (PostgreSQL only: embedded
 * PGlite lives inside the service process, so the check is skipped there); and what each stored click
 * cost in bytes: of write-ahead log (the whole server's, so a quiet machine matters) and of each table
 * the click writer keeps, indexes included.
 *
 * Exit code 1 when the service does not start, any run saw an error, a timeout or a status other
 * than 301 (the reference's too), or the clicks recorded differ from the redirects answered. The speed
 * targets (ratio >= 0.8, p99 < 10 ms) are printed PASS/FAIL but do NOT set the exit code: they depend
 * on the machine and on what else runs on it, while errors and lost clicks are bugs.
 */
import autocannon from "autocannon"
import { spawn } from "node:child_process"
import { readdir, readFile } from "node:fs/promises"
import { request } from "node:http"
import { availableParallelism, loadavg } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { benchDatabase } from "./support/BenchDatabase.ts"
import { type Cleanup, runProgram } from "./support/Cleanup.ts"
import { freePort } from "./support/FreePort.ts"
import { generatorOptions } from "./support/Load.ts"
import { requestJson, startAdminService } from "./support/Setup.ts"
import { metricsOf, sample } from "./support/Metrics.ts"
import { formatTable } from "./support/Table.ts"

const DOMAIN = "bench.example"
const LINKS = 1000
const SETUP_CONCURRENCY = 8
const USER_AGENT =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
const targetOf = (n: number) => `https://example.com/landing/${n}?src=bench`
const CACHE_CONTROL = "private, max-age=90"

const numberFromEnv = (name: string, fallback: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${raw}`)
  return value
}

const seconds = numberFromEnv("BENCH_SECONDS", 10)
const warmUpSeconds = numberFromEnv("BENCH_WARMUP_SECONDS", 5)
const connections = Math.max(1, Math.round(numberFromEnv("BENCH_CONNECTIONS", 50)))
const rounds = Math.max(1, Math.round(numberFromEnv("BENCH_ROUNDS", 3)))

const loadAverage = () => loadavg().map((n) => n.toFixed(2)).join(" ")

// ---------------------------------------------------------------------------------------------------
// The reference: a bare node:http server in a child process, the same 301 for every request.

const REFERENCE = `
const http = require("node:http")
const headers = { location: ${JSON.stringify(targetOf(1))}, "cache-control": ${JSON.stringify(CACHE_CONTROL)} }
http.createServer((req, res) => {
  res.writeHead(301, headers)
  res.end()
}).listen(Number(process.argv[1]), "127.0.0.1", () => process.stdout.write("ready\\n"))
`

const startReference = async (cleanup: Cleanup, port: number) => {
  const child = spawn(process.execPath, ["-e", REFERENCE, String(port)], { stdio: ["ignore", "pipe", "inherit"] })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  cleanup.defer("stop the reference server", async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    await exited
  })
  await new Promise<void>((resolve, reject) => {
    child.stdout.once("data", () => resolve())
    child.once("exit", (code, signal) => reject(new Error(`the reference server exited (${signal ?? code})`)))
  })
  if (child.pid === undefined) throw new Error("the reference server did not start")
  return { baseUrl: `http://127.0.0.1:${port}`, pid: child.pid }
}

/** VmRSS and VmHWM (peak) of a process, in KiB. */
const memoryOf = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "")
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB$`, "m").exec(status)
    return match?.[1] === undefined ? undefined : Number(match[1])
  }
  return { rss: field("VmRSS"), peak: field("VmHWM") }
}

/** User + system CPU time of a process so far, in seconds (clock ticks of 1/100 s, as on Linux). */
const cpuSecondsOf = async (pid: number) => {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  // Fields 14 and 15 of stat(5), utime and stime; the slice starts at field 3.
  const ticks = Number(fields[11]) + Number(fields[12])
  return Number.isFinite(ticks) ? ticks / 100 : undefined
}

/** The machine's CPU time so far from /proc/stat, in ticks: busy (steal excluded), steal, and all. */
const machineTicks = async () => {
  const line = (await readFile("/proc/stat", "utf8").catch(() => "")).split("\n")[0] ?? ""
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.split(/\s+/).slice(1, 9).map(Number)
  const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0)
  return { busy, steal: steal ?? 0, all: busy + (steal ?? 0) + (idle ?? 0) + (iowait ?? 0) }
}

// ---------------------------------------------------------------------------------------------------
// Load

interface Run {
  readonly server: "reference" | "service"
  readonly label: string
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
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
}

// Every connection cycles over the 1,000 aliases (autocannon's `requests` list, in order). Plain
// request objects, not setupRequest functions: those would have to be module files in worker mode,
// and building a request per call costs the generator CPU it shares with the servers on 2 cores.
const REQUESTS = Array.from({ length: LINKS }, (_, n) => ({ method: "GET" as const, path: `/l${n}` }))

const load = async (
  server: Run["server"],
  pid: number,
  label: string,
  baseUrl: string,
  host: string | undefined,
  duration: number
): Promise<Run> => {
  const cpuBefore = await cpuSecondsOf(pid)
  const machineBefore = await machineTicks()
  const generatorBefore = process.cpuUsage()
  const started = performance.now()
  const result = await autocannon({
    ...generatorOptions,
    url: baseUrl,
    connections,
    duration,
    headers: {
      "user-agent": USER_AGENT,
      accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
      "accept-language": "en-US,en;q=0.9",
      ...(host === undefined ? {} : { host })
    },
    requests: REQUESTS
  })
  const elapsed = (performance.now() - started) / 1000
  const generator = process.cpuUsage(generatorBefore)
  const machineAfter = await machineTicks()
  const cpuAfter = await cpuSecondsOf(pid)
  const all = machineAfter.all - machineBefore.all
  const share = (ticks: number) => (all > 0 ? `${((ticks / all) * 100).toFixed(0)}%` : "?")
  const { rss } = await memoryOf(pid)
  const byStatus = result.statusCodeStats as Record<string, { count: number } | undefined>
  const redirects = byStatus["301"]?.count ?? 0
  const answered = Object.values(byStatus).reduce((sum, entry) => sum + (entry?.count ?? 0), 0)
  return {
    server,
    label,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    redirects,
    unexpected: answered - redirects,
    statuses: Object.entries(byStatus)
      .map(([status, entry]) => `${status}:${entry?.count ?? 0}`)
      .join(" "),
    errors: result.errors,
    timeouts: result.timeouts,
    rssKiB: rss,
    cpuPercent: cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) / elapsed) * 100,
    cpuNote:
      `generator (this process, autocannon worker) ${(((generator.user + generator.system) / 1e6 / elapsed) * 100).toFixed(0)}% of a core; ` +
      `machine busy ${share(machineAfter.busy - machineBefore.busy)}, steal ${share(machineAfter.steal - machineBefore.steal)} of all cores`
  }
}

/** One GET through node:http (fetch may not set Host), checked for the expected 301 and headers. */
const probe = (baseUrl: string, path: string, host: string | undefined, location: string) =>
  new Promise<void>((resolve, reject) => {
    const url = new URL(path, baseUrl)
    const req = request(
      url,
      { method: "GET", headers: { "user-agent": USER_AGENT, ...(host === undefined ? {} : { host }) } },
      (res) => {
        res.resume()
        res.once("end", () => {
          const problems = [
            res.statusCode === 301 ? undefined : `status ${res.statusCode}`,
            res.headers.location === location ? undefined : `location ${res.headers.location}`,
            res.headers["cache-control"] === CACHE_CONTROL ? undefined : `cache-control ${res.headers["cache-control"]}`
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
// The service's own numbers

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
  "link_visitors"
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

const domainIdOf = (json: unknown): number => {
  const objects = typeof json === "object" && json !== null && "objects" in json ? json.objects : undefined
  const first: unknown = Array.isArray(objects) ? objects[0] : undefined
  if (typeof first === "object" && first !== null && "id" in first && typeof first.id === "number") return first.id
  throw new Error(`no domain id in ${JSON.stringify(json).slice(0, 500)}`)
}

const median = (runs: ReadonlyArray<Run>): Run => {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)
  return sorted[Math.floor(sorted.length / 2)]!
}

const mib = (kib: number | undefined) => (kib === undefined ? "?" : (kib / 1024).toFixed(1))
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL")

const run = async (cleanup: Cleanup): Promise<number> => {
  const database = await benchDatabase(cleanup)
  const { service, api, token } = await startAdminService(cleanup, database.env)
  const domainId = domainIdOf((await requestJson("POST", `${api}/domains`, { token, body: { domain: DOMAIN } })).json)
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
  const setupMs = Date.now() - setupStarted
  const reference = await startReference(cleanup, await freePort())

  // One request each before the load: the right answer, not just a 301. The service's probe is a GET,
  // so it records a click too.
  await probe(service.baseUrl, "/l42", DOMAIN, targetOf(42))
  await probe(reference.baseUrl, "/l42", undefined, targetOf(1))
  const probeClicks = 1
  const setupMemory = await memoryOf(service.pid)

  process.stdout.write(
    [
      `Redirect benchmark: node ${process.version}, nproc ${availableParallelism()}, database ${database.kind}`,
      `reference: bare node:http in a separate child process; load: autocannon ${JSON.stringify(generatorOptions)}`,
      `${connections} connections, GET /l0../l${LINKS - 1} in turn (Host ${DOMAIN} for the service), ` +
        `${seconds} s per run, ${rounds} round(s) after a ${warmUpSeconds} s warm-up of each server`,
      `setup: 1 domain and ${LINKS} links created in ${(setupMs / 1000).toFixed(1)} s (${SETUP_CONCURRENCY} at a time); ` +
        `service RSS after setup ${mib(setupMemory.rss)} MiB`,
      `load average before: ${loadAverage()}`
    ].join("\n") + "\n\n"
  )

  const databaseUrl = database.env.DATABASE_URL
  const storedBefore =
    databaseUrl === undefined
      ? undefined
      : { clicks: await countClicks(databaseUrl), wal: await walPosition(databaseUrl), tables: await clickTableBytes(databaseUrl) }
  const runs: Array<Run> = []
  if (warmUpSeconds > 0) {
    process.stderr.write("warming up the reference, then the service...\n")
    runs.push(await load("reference", reference.pid, "reference warm-up", reference.baseUrl, undefined, warmUpSeconds))
    runs.push(await load("service", service.pid, "service warm-up", service.baseUrl, DOMAIN, warmUpSeconds))
  }
  for (let round = 1; round <= rounds; round++) {
    process.stderr.write(`round ${round} of ${rounds}: reference, then service...\n`)
    runs.push(await load("reference", reference.pid, `reference round ${round}`, reference.baseUrl, undefined, seconds))
    runs.push(await load("service", service.pid, `service round ${round}`, service.baseUrl, DOMAIN, seconds))
  }
  const referenceMemory = await memoryOf(reference.pid)
  const serviceMemory = await memoryOf(service.pid)
  const samples = await metricsOf(service.baseUrl)

  const measured = runs.filter((r) => !r.label.endsWith("warm-up"))
  const bareRuns = measured.filter((r) => r.server === "reference")
  const serviceRuns = measured.filter((r) => r.server === "service")
  const bare = median(bareRuns)
  const served = median(serviceRuns)
  const ratio = served.requestsPerSecond / bare.requestsPerSecond

  const row = (r: Run, name: string, vs: string) => [
    name,
    String(connections),
    r.requestsPerSecond.toFixed(0),
    r.p50.toFixed(1),
    r.p99.toFixed(1),
    String(r.unexpected),
    `${r.errors}/${r.timeouts}`,
    mib(r.rssKiB),
    r.cpuPercent === undefined ? "?" : r.cpuPercent.toFixed(0),
    vs
  ]
  const rows = measured.map((r) => {
    const round = /round (\d+)$/.exec(r.label)?.[1]
    const partner = bareRuns.find((b) => b.label === `reference round ${round}`)
    const vs = r.server === "reference" ? "reference" : partner === undefined ? "?" : (r.requestsPerSecond / partner.requestsPerSecond).toFixed(3)
    return row(r, r.label, vs)
  })
  rows.push(row(bare, "reference node:http 301 (median)", "reference"))
  rows.push(row(served, "service GET /<alias> (median)", ratio.toFixed(3)))
  process.stdout.write(
    formatTable(
      ["scenario", "conns", "req/s", "p50 ms", "p99 ms", "not 301", "errors/timeouts", "RSS MiB", "CPU %", "service/reference"],
      rows
    ) + "\n\n"
  )
  process.stdout.write(
    [
      "status codes and CPU per run (autocannon counts 3xx as non-2xx; here 301 is success):",
      ...runs.map((r) => `  ${r.label}: ${r.statuses || "none"}; ${r.cpuNote}`),
      `RSS at the end (peak): reference ${mib(referenceMemory.rss)} MiB (${mib(referenceMemory.peak)}), ` +
        `service ${mib(serviceMemory.rss)} MiB (${mib(serviceMemory.peak)})`,
      "(RSS: of the server at the end of the run; CPU %: the server process's, of one core, during the run)",
      `service click flushes: ${flushSummary(samples)}; spilled ${sample(samples, "clicks_spilled_total") ?? 0}`,
      ""
    ].join("\n") + "\n"
  )

  // Clicks. autocannon drops the answers still in flight when a run ends, so its 301 count can be
  // below what the service answered (and enqueued clicks for) by up to one per connection per run;
  // the service's redirects_total{status="301"} counts every one. The clicks must equal the latter,
  // and can never be fewer than the former.
  const counted = runs.filter((r) => r.server === "service").reduce((sum, r) => sum + r.redirects, 0) + probeClicks
  const serviceRunCount = runs.filter((r) => r.server === "service").length
  const answered = sample(samples, "redirects_total", `status="301"`)
  const answeredOk = answered !== undefined && answered >= counted && answered <= counted + connections * serviceRunCount
  process.stdout.write(
    `redirects answered: ${counted} counted by autocannon (warm-up + runs + 1 probe), ` +
      `${answered ?? "?"} by the service's redirects_total{status="301"}` +
      `${answeredOk ? "" : " (INCONSISTENT: expected between the two bounds)"}\n`
  )
  let clicksLost = false
  let clicksVerdict = "skipped (embedded)"
  if (database.env.DATABASE_URL === undefined) {
    process.stdout.write("clicks recorded vs redirects answered: skipped (embedded PGlite lives in the service process)\n")
  } else {
    const written = sample(samples, "clicks_written_total") ?? 0
    const stopping = Date.now()
    const exit = await service.stop()
    const stopMs = Date.now() - stopping
    const recorded = await countClicks(database.env.DATABASE_URL)
    const spilled = await spilledLines(database.env.DATA_DIR)
    // Without a usable service count the autocannon count is the reference, with its in-flight slack.
    const equal =
      answered !== undefined && answeredOk
        ? recorded === answered
        : recorded >= counted && recorded <= counted + connections * serviceRunCount
    clicksLost = !equal
    clicksVerdict = verdict(equal)
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
                (await walPosition(database.env.DATABASE_URL)) - storedBefore.wal,
                storedBefore.tables,
                await clickTableBytes(database.env.DATABASE_URL)
              )
            ])
      ].join("\n") + "\n"
    )
  }

  process.stdout.write(
    [
      "",
      "targets (reported only; they do not set the exit code, errors and lost clicks do):",
      `  service/reference req/s >= 0.8: ${ratio.toFixed(3)} ${verdict(ratio >= 0.8)}`,
      `  p99 < 10 ms at ${connections} connections: ${served.p99.toFixed(1)} ms ${verdict(served.p99 < 10)}`,
      `  every redirect recorded: ${clicksVerdict}`,
      `load average after: ${loadAverage()}`
    ].join("\n") + "\n"
  )

  const broken = runs.filter((r) => r.errors > 0 || r.timeouts > 0 || r.unexpected > 0)
  for (const r of broken) process.stderr.write(`FAILED: ${r.label} had errors, timeouts or statuses other than 301\n`)
  if (clicksLost) process.stderr.write("FAILED: the clicks recorded differ from the redirects answered\n")
  return broken.length > 0 || clicksLost ? 1 : 0
}

runProgram("bench", run)
