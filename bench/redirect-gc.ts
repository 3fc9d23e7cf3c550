/**
 * The redirect thread's garbage collection at a fixed, moderate rate, beside a bare node:http
 * reference answering the same 301 in the same run. `npm run bench:redirect-gc`.
 *
 * Every server runs with --trace-gc-nvp; its stdout lines are parsed here. A scavenge costs what
 * survives it, and what it promotes drives the mark-compacts: per 100,000 redirects answered, each
 * server's scavenges (count, total pause), their median, p99 and max pause, the bytes surviving a
 * scavenge (mean of new_space_survived) and promoted to the old generation, the mark-compacts and
 * their longest pause; the service's redirect-thread event-loop delay (its /metrics, largest
 * per-second max); each server's RSS and the service's nodejs_external_memory_bytes at the end.
 * Only the service's main thread (the redirect thread) counts: its isolate is the one started
 * first, the click writer thread's and tsx's loader thread's later.
 *
 * Order: setup (1 domain, 1,000 plain links /l0..), a warm-up of each server at the rate, then
 * BENCH_GC_ROUNDS rounds of the reference then each service, BENCH_GC_SECONDS each, at the rate.
 *
 * Environment (all optional):
 *   BENCH_GC_RATE          requests a second, evenly spaced (default 3000)
 *   BENCH_GC_SECONDS       length of each run, s (default 20)
 *   BENCH_GC_ROUNDS        rounds (default 2)
 *   BENCH_GC_CONNECTIONS   keep-alive connections (default 50)
 *   BENCH_GC_BASE          another checkout (e.g. a worktree of main) run as a second service, on a
 *                          database of its own, in every round: a same-run A/B
 *   BENCH_GC_NODE_ARGS     Node flags of the services only (e.g. --max-semi-space-size=32), space separated
 *   BENCH_GC_FLAG_VARIANTS more services of this checkout, each with other Node flags, in every round:
 *                          flag sets separated by ";" (e.g. "--single-threaded-gc;--min-semi-space-size=16")
 *   BENCH_GC_LINES_DIR     the main threads' --trace-gc-nvp lines of each measured run, one file per server and round
 *   BENCH_GC_HEAP_PROFILE_DIR  --heap-prof of this checkout's service into that directory (written at its stop)
 *   BENCH_DATABASE_URL or DATABASE_URL   a PostgreSQL server (else embedded PGlite)
 */
import { readFile, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { benchDatabase } from "./support/BenchDatabase.ts"
import { type Cleanup, runProgram } from "./support/Cleanup.ts"
import { watchEventLoop } from "./support/EventLoopWatch.ts"
import { freePort } from "./support/FreePort.ts"
import { metricsOf, sample } from "./support/Metrics.ts"
import { pacedLoad } from "./support/PacedLoad.ts"
import { startRedirectReference } from "./support/RedirectReference.ts"
import { type ServiceProcess, startService } from "./support/ServiceProcess.ts"
import { accessTokenOf, ADMIN_EMAIL, ADMIN_PASSWORD, benchServiceEnv, requestJson } from "./support/Setup.ts"
import { formatTable } from "./support/Table.ts"

const DOMAIN = "bench.example"
const LINKS = 1000
const SETUP_CONCURRENCY = 8
const WARM_UP_SECONDS = 5
const HEADERS = {
  "user-agent":
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
  accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
  "accept-language": "en-US,en;q=0.9"
}
const targetOf = (n: number) => `https://example.com/landing/${n}?src=bench`
const GC_ARGS = ["--trace-gc-nvp"]

const numberFromEnv = (name: string, fallback: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${raw}`)
  return value
}

const rate = numberFromEnv("BENCH_GC_RATE", 3000)
const seconds = numberFromEnv("BENCH_GC_SECONDS", 20)
const rounds = Math.round(numberFromEnv("BENCH_GC_ROUNDS", 2))
const connections = Math.round(numberFromEnv("BENCH_GC_CONNECTIONS", 50))
const baseRoot = process.env.BENCH_GC_BASE === undefined || process.env.BENCH_GC_BASE === "" ? undefined : resolve(process.env.BENCH_GC_BASE)
const serviceArgs = (process.env.BENCH_GC_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "")
const flagVariants = (process.env.BENCH_GC_FLAG_VARIANTS ?? "")
  .split(";")
  .map((variant) => variant.split(" ").filter((arg) => arg !== ""))
  .filter((variant) => variant.length > 0)
const heapProfileDir = process.env.BENCH_GC_HEAP_PROFILE_DIR
const linesDir = process.env.BENCH_GC_LINES_DIR

// ---------------------------------------------------------------------------------------------------
// --trace-gc-nvp lines

interface GcEvent {
  readonly isolate: string
  readonly line: string
  /** When it ended, on this process's performance.now() clock (from the isolate's own ms, see `GcLog`). */
  at: number
  /** "s" scavenge, "ms" mark-compact, else other. */
  readonly kind: string
  readonly pause: number
  readonly survived: number
  readonly promoted: number
}

const LINE = /^\[\d+:(0x[0-9a-f]+)\]\s+([\d.]+) ms: pause=([\d.]+) .*?\bgc=(\w+)/
const field = (line: string, name: string) => Number(new RegExp(`\\b${name}=(\\d+)`).exec(line)?.[1] ?? 0)

/**
 * The GC events of one process by isolate. Lines come through a pipe, perhaps late (stdio buffers),
 * never early: an isolate's clock offset is the smallest (arrival - its ms) seen, and every event's
 * time is its own ms plus that offset.
 */
class GcLog {
  private readonly events: Array<GcEvent & { readonly ms: number }> = []
  private readonly offsets = new Map<string, number>()

  readonly onLine = (line: string) => {
    const match = LINE.exec(line)
    if (match === null) return
    const [, isolate = "", msText = "0", pause = "0", kind = ""] = match
    const ms = Number(msText)
    const offset = performance.now() - ms
    this.offsets.set(isolate, Math.min(this.offsets.get(isolate) ?? offset, offset))
    this.events.push({ isolate, line, ms, at: 0, kind, pause: Number(pause), survived: field(line, "new_space_survived"), promoted: field(line, "promoted") })
  }

  /** The first-started isolate's events between `from` and `to`, and how many events other isolates had then. */
  between(from: number, to: number): { readonly events: ReadonlyArray<GcEvent>; readonly others: number } {
    const main = [...this.offsets].sort((a, b) => a[1] - b[1])[0]?.[0]
    const inside = this.events.filter((event) => {
      event.at = event.ms + (this.offsets.get(event.isolate) ?? 0)
      return event.at >= from && event.at < to
    })
    return { events: inside.filter((event) => event.isolate === main), others: inside.filter((event) => event.isolate !== main).length }
  }
}

// ---------------------------------------------------------------------------------------------------

interface Server {
  readonly name: string
  readonly baseUrl: string
  readonly host: string
  readonly pid: number
  readonly gc: GcLog
  readonly service: boolean
}

interface Round {
  readonly redirects: number
  readonly bad: number
  readonly events: ReadonlyArray<GcEvent>
  readonly others: number
  readonly loopMaxMs: number | undefined
  readonly rssKiB: number | undefined
  /** The service's nodejs_external_memory_bytes at the end (array buffers held off the heap until a GC frees them). */
  readonly externalBytes: number | undefined
}

const rssOf = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "")
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)
  return match?.[1] === undefined ? undefined : Number(match[1])
}

const idOf = (json: unknown): number => {
  const objects = typeof json === "object" && json !== null && "objects" in json ? json.objects : undefined
  const first: unknown = Array.isArray(objects) ? objects[0] : undefined
  if (typeof first === "object" && first !== null && "id" in first && typeof first.id === "number") return first.id
  throw new Error(`no id in ${JSON.stringify(json).slice(0, 500)}`)
}

/** A service of checkout `root` (undefined: this one) on a database of its own, with 1,000 links on DOMAIN. */
const startGcService = async (cleanup: Cleanup, name: string, root: string | undefined, extraArgs: ReadonlyArray<string>): Promise<Server & { readonly process: ServiceProcess }> => {
  const database = await benchDatabase(cleanup)
  const gc = new GcLog()
  const service = await startService(cleanup, {
    port: await freePort(),
    readyTimeoutMs: 90_000,
    env: benchServiceEnv(database.env),
    nodeArgs: [...GC_ARGS, ...serviceArgs, ...extraArgs],
    onLine: gc.onLine,
    ...(root === undefined ? {} : { root })
  })
  const api = `${service.baseUrl}/api/v4`
  const credentials = { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }
  const token = accessTokenOf((await requestJson("POST", `${api}/access_token`, { body: credentials })).json)
  const domainId = idOf((await requestJson("POST", `${api}/domains`, { token, body: { domain: DOMAIN } })).json)
  let next = 0
  await Promise.all(
    Array.from({ length: SETUP_CONCURRENCY }, async () => {
      for (let n = next++; n < LINKS; n = next++) {
        await requestJson("POST", `${api}/${domainId}/links`, { token, body: { url: targetOf(n), alias: `l${n}`, override_404_check: 1 } })
      }
    })
  )
  return { name, baseUrl: service.baseUrl, host: DOMAIN, pid: service.pid, gc, service: true, process: service }
}

const PATHS = Array.from({ length: LINKS }, (_, n) => `/l${n}`)

const load = async (server: Server, duration: number): Promise<Round> => {
  const url = new URL(server.baseUrl)
  const watch = server.service ? watchEventLoop(server.baseUrl) : undefined
  const from = performance.now()
  const paced = await pacedLoad({
    host: url.hostname,
    port: Number(url.port),
    hostHeader: server.host,
    headers: HEADERS,
    paths: PATHS,
    rate,
    seconds: duration,
    connections,
    timeoutMs: 10_000
  })
  const to = performance.now()
  const loop = await watch?.stop()
  const rssKiB = await rssOf(server.pid)
  const externalBytes = server.service ? sample(await metricsOf(server.baseUrl), "nodejs_external_memory_bytes") : undefined
  // Lines of the run's last collections still in the child's stdio buffer.
  await sleep(1500)
  const redirects = paced.statuses["301"] ?? 0
  const answered = Object.values(paced.statuses).reduce((sum, n) => sum + n, 0)
  const { events, others } = server.gc.between(from, to)
  return { redirects, bad: answered - redirects + paced.errors + paced.timeouts, events, others, loopMaxMs: loop?.threads.redirect.max, rssKiB, externalBytes }
}

const quantile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!

const fixed = (value: number | undefined, digits: number) => (value === undefined || !Number.isFinite(value) ? "-" : value.toFixed(digits))

const summaryRow = (name: string, runs: ReadonlyArray<Round>) => {
  const redirects = runs.reduce((sum, run) => sum + run.redirects, 0)
  const events = runs.flatMap((run) => run.events)
  const scavenges = events.filter((event) => event.kind === "s")
  const compacts = events.filter((event) => event.kind === "ms")
  const pauses = scavenges.map((event) => event.pause).sort((a, b) => a - b)
  const per = (value: number) => (value * 100_000) / redirects
  const total = pauses.reduce((sum, pause) => sum + pause, 0)
  const promoted = events.reduce((sum, event) => sum + event.promoted, 0)
  const survived = scavenges.reduce((sum, event) => sum + event.survived, 0)
  const loops = runs.map((run) => run.loopMaxMs).filter((value): value is number => value !== undefined)
  return [
    name,
    String(redirects),
    fixed(per(scavenges.length), 0),
    fixed(per(total), 0),
    fixed(quantile(pauses, 0.5), 2),
    fixed(quantile(pauses, 0.99), 2),
    fixed(pauses.at(-1), 2),
    fixed(scavenges.length === 0 ? Number.NaN : survived / scavenges.length / 1024, 0),
    fixed(per(promoted) / 1024 / 1024, 2),
    fixed(per(compacts.length), 2),
    fixed(Math.max(...compacts.map((event) => event.pause), Number.NaN), 1),
    loops.length === 0 ? "-" : fixed(Math.max(...loops), 1),
    runs.map((run) => fixed((run.rssKiB ?? Number.NaN) / 1024, 0)).join("/"),
    runs.map((run) => fixed((run.externalBytes ?? Number.NaN) / 1024 / 1024, 1)).join("/")
  ]
}

const run = async (cleanup: Cleanup): Promise<number> => {
  const services: Array<Server & { readonly process: ServiceProcess }> = [
    await startGcService(cleanup, "service", undefined, heapProfileDir === undefined ? [] : ["--heap-prof", `--heap-prof-dir=${heapProfileDir}`])
  ]
  for (const flags of flagVariants) services.push(await startGcService(cleanup, `service ${flags.join(" ")}`, undefined, flags))
  if (baseRoot !== undefined) services.push(await startGcService(cleanup, "service (base)", baseRoot, []))
  const referenceGc = new GcLog()
  const reference = await startRedirectReference(
    cleanup,
    await freePort(),
    { location: targetOf(1), "cache-control": "private, max-age=90" },
    { nodeArgs: GC_ARGS, onLine: referenceGc.onLine }
  )
  const servers: ReadonlyArray<Server> = [
    { name: "reference", baseUrl: reference.baseUrl, host: new URL(reference.baseUrl).host, pid: reference.pid, gc: referenceGc, service: false },
    ...services
  ]
  process.stdout.write(
    `Redirect-thread GC: ${rate} req/s over ${connections} connections, ${seconds} s per run, ${rounds} round(s) after a ${WARM_UP_SECONDS} s warm-up; ` +
      `services ${[...GC_ARGS, ...serviceArgs].join(" ")}${baseRoot === undefined ? "" : `; base: ${baseRoot}`}\n`
  )
  for (const server of servers) await load(server, WARM_UP_SECONDS)
  const results = new Map<string, Array<Round>>(servers.map((server) => [server.name, []]))
  let failed = false
  for (let round = 1; round <= rounds; round++) {
    for (const server of servers) {
      process.stderr.write(`round ${round}: ${server.name}\n`)
      const result = await load(server, seconds)
      results.get(server.name)!.push(result)
      if (linesDir !== undefined) {
        const file = join(linesDir, `${server.name.replace(/\W+/g, "-")}-${round}.nvp`)
        await writeFile(file, result.events.map((event) => event.line).join("\n") + "\n")
      }
      if (result.bad > 0) failed = true
      process.stderr.write(
        `  ${result.redirects} redirects, ${result.bad} other answers or errors, ${result.events.length} GCs of the main thread, ${result.others} of other threads\n`
      )
    }
  }
  process.stdout.write(
    formatTable(
      [
        "server",
        "redirects",
        "scav/100k",
        "scav ms/100k",
        "scav p50 ms",
        "p99",
        "max",
        "survived KiB/scav",
        "promoted MiB/100k",
        "MC/100k",
        "MC max ms",
        "loop max ms",
        "RSS MiB per round",
        "external MiB per round"
      ],
      servers.map((server) => summaryRow(server.name, results.get(server.name)!))
    ) + "\n"
  )
  if (failed) process.stdout.write("FAILED: answers other than 301, errors or timeouts (see stderr)\n")
  return failed ? 1 : 0
}

runProgram("bench:redirect-gc", run)
