/**
 * Memory and throughput of the CSV exports (extension) of the real server process. `npm run
 * bench:export`; PostgreSQL only (BENCH_DATABASE_URL or DATABASE_URL names the server: a fresh
 * database is made there and dropped at the end), e.g.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:export
 *   BENCH_CLICKS=10000000 BENCH_DATABASE_URL=... npm run bench:export
 *
 * Setup: the service is started on the new database, one domain and BENCH_LINKS links (default 100)
 * are created through the API, then BENCH_CLICKS clicks (default 1,000,000) over the 360 days before
 * now are loaded by SQL (bench/support/ClickLoad.ts, as bench:analytics loads them).
 *
 * Measured: the service's resident set (VmRSS of /proc/<pid>/status, sampled every 50 ms, and its
 * peak VmHWM, reset through /proc/<pid>/clear_refs just before each download) and its main thread's
 * heap in use (from /metrics, every 250 ms) while one client downloads the clicks export of the whole
 * window as fast as it reads, BENCH_FAST_RUNS times (default 2), then while a client reads it
 * at BENCH_SLOW_KIB_PER_SECOND (default 2,048) for BENCH_SLOW_SECONDS (default 10; 0 skips it), so
 * that the service has to hold back; and the first byte, the whole download's time, bytes and rows a
 * second, and the service's CPU. The rows received are checked against the clicks counted in the
 * database; the links export is downloaded and checked too.
 *
 * Exit code 1 when the service does not start, an answer is not a 200, or a check fails. The target,
 * constant memory, is printed PASS/FAIL: the service runs with its main heap capped at
 * BENCH_SERVICE_HEAP_MIB (default 192; 0 for no cap), and every download must arrive whole. An export
 * that held its rows (about 1 KiB each as objects, 190 B as text) would exhaust the cap and crash the
 * service well before a million rows; a heap that the garbage collector lets grow before it collects
 * (its level follows the allocation rate, not the export's size) stays under it. The peaks of RSS and
 * heap in use are printed by quarter of each download, so that a growth with the rows would show.
 */
import { availableParallelism, loadavg } from "node:os"
import { readFile, writeFile } from "node:fs/promises"
import pg from "pg"
import { benchDatabase } from "./support/BenchDatabase.ts"
import { type Cleanup, runProgram } from "./support/Cleanup.ts"
import { numberFromEnv } from "./support/Env.ts"
import { loadClicks } from "./support/ClickLoad.ts"
import { cpuTicksOf } from "./support/ProcessCpu.ts"
import { requestJson, startAdminService } from "./support/Setup.ts"
import { formatTable } from "./support/Table.ts"

const DAYS = 360
const DAY = 86_400
const SETUP_CONCURRENCY = 8

const clickCount = numberFromEnv("BENCH_CLICKS", 1_000_000)
const linkCount = Math.max(1, numberFromEnv("BENCH_LINKS", 100))
const fastRunCount = numberFromEnv("BENCH_FAST_RUNS", 2)
const slowSeconds = numberFromEnv("BENCH_SLOW_SECONDS", 10)
const slowKiBPerSecond = Math.max(1, numberFromEnv("BENCH_SLOW_KIB_PER_SECOND", 2048))
const heapCapMiB = numberFromEnv("BENCH_SERVICE_HEAP_MIB", 192)

const log = (line: string) => process.stderr.write(`${line}\n`)
const mib = (kib: number) => (kib / 1024).toFixed(1)
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const LF = 10
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const firstId = (json: unknown): number => {
  const objects = isRecord(json) ? json.objects : undefined
  const first: unknown = Array.isArray(objects) ? objects[0] : undefined
  const id = isRecord(first) ? first.id : undefined
  if (typeof id !== "number") throw new Error(`no objects[0].id in ${JSON.stringify(json).slice(0, 300)}`)
  return id
}

/** VmRSS and VmHWM of a process, in KiB. */
const memoryOf = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8")
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB$`, "m").exec(status)?.[1] ?? Number.NaN)
  return { rss: field("VmRSS"), hwm: field("VmHWM") }
}

/** The main thread's V8 heap in use, in KiB, from /metrics. */
const heapUsedKiB = async (baseUrl: string) => {
  const text = await (await fetch(`${baseUrl}/metrics`)).text()
  return Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1] ?? Number.NaN) / 1024
}

/** A sample of the service's memory, in KiB, at a time in ms. */
interface Sample {
  readonly at: number
  readonly kib: number
}

/** The largest sample of each quarter of a run (what memory holds as the export proceeds), in KiB; NaN for a quarter without one. */
const quarterPeaks = (samples: ReadonlyArray<Sample>): ReadonlyArray<number> => {
  const first = samples[0]?.at ?? 0
  const span = Math.max(1, (samples.at(-1)?.at ?? 0) - first)
  const peaks = [Number.NaN, Number.NaN, Number.NaN, Number.NaN]
  for (const sample of samples) {
    const quarter = Math.min(3, Math.floor(((sample.at - first) / span) * 4))
    peaks[quarter] = Number.isNaN(peaks[quarter]!) ? sample.kib : Math.max(peaks[quarter]!, sample.kib)
  }
  return peaks
}

/** Samples the RSS every 50 ms and the main thread's heap in use every 250 ms until stopped. */
const sampleMemory = (pid: number, baseUrl: string) => {
  const rss: Array<Sample> = []
  const heap: Array<Sample> = []
  let running = true
  const done = Promise.all([
    (async () => {
      while (running) {
        rss.push({ at: performance.now(), kib: (await memoryOf(pid)).rss })
        await sleep(50)
      }
    })(),
    (async () => {
      while (running) {
        heap.push({ at: performance.now(), kib: await heapUsedKiB(baseUrl) })
        await sleep(250)
      }
    })()
  ])
  return async () => {
    running = false
    await done
    const peak = (samples: ReadonlyArray<Sample>) => Math.max(0, ...samples.map((sample) => sample.kib))
    return { rss: peak(rss), heap: peak(heap), rssQuarters: quarterPeaks(rss), heapQuarters: quarterPeaks(heap) }
  }
}

interface Download {
  readonly status: number
  readonly firstByteMs: number
  readonly ms: number
  readonly bytes: number
  readonly records: number
  readonly head: string
}

/**
 * Downloads `url`, counting bytes and records (line feeds: the bench's data has no line break
 * inside a field), at most `bytesPerSecond` when given, and for at most `limitMs` when given (then cancelled).
 */
const download = async (url: string, token: string, pace?: { readonly bytesPerSecond: number; readonly limitMs: number }): Promise<Download> => {
  const started = performance.now()
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  const reader = response.body!.getReader()
  let firstByteMs = Number.NaN
  let bytes = 0
  let records = 0
  let head = ""
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (bytes === 0) firstByteMs = performance.now() - started
    if (head.length < 200) head += new TextDecoder().decode(value.subarray(0, 200))
    for (const byte of value) if (byte === LF) records++
    bytes += value.length
    if (pace !== undefined) {
      const elapsed = performance.now() - started
      if (elapsed > pace.limitMs) {
        await reader.cancel()
        break
      }
      const due = (bytes / pace.bytesPerSecond) * 1000
      if (due > elapsed) await sleep(due - elapsed)
    }
  }
  return { status: response.status, firstByteMs, ms: performance.now() - started, bytes, records, head }
}

const run = async (cleanup: Cleanup): Promise<number> => {
  if (!(process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL)) {
    process.stderr.write("bench:export needs PostgreSQL: set BENCH_DATABASE_URL, e.g. BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres\n")
    return 1
  }
  // The service's main heap is capped below what an export that held its rows would need (startService
  // passes BENCH_NODE_ARGS to node).
  if (heapCapMiB > 0) process.env.BENCH_NODE_ARGS = `${process.env.BENCH_NODE_ARGS ?? ""} --max-old-space-size=${heapCapMiB}`.trim()
  const database = await benchDatabase(cleanup)
  const databaseUrl = database.env.DATABASE_URL
  if (databaseUrl === undefined) throw new Error("benchDatabase gave no DATABASE_URL")
  const { service, api, token } = await startAdminService(cleanup, database.env)
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "bench-export" })
  await client.connect()
  cleanup.defer("close the bench's database connection", () => client.end())
  await client.query("UPDATE accounts SET plan = 'enterprise'")

  const domainId = firstId((await requestJson("POST", `${api}/domains`, { token, body: { domain: "export.example" } })).json)
  const linkIds: Array<number> = new Array<number>(linkCount)
  let next = 0
  await Promise.all(
    Array.from({ length: SETUP_CONCURRENCY }, async () => {
      for (let n = next++; n < linkCount; n = next++) {
        const created = await requestJson("POST", `${api}/${domainId}/links`, {
          token,
          body: { url: `https://example.com/landing/${n}?src=bench`, alias: `l${n}`, notes: `link ${n}, "quoted"`, override_404_check: 1 }
        })
        linkIds[n] = firstId(created.json)
      }
    })
  )
  const end = new Date()
  log(`loading ${clickCount.toLocaleString("en-US")} clicks over the ${DAYS} days before now...`)
  const loaders = [client, new pg.Client({ connectionString: databaseUrl, application_name: "bench-export-load" })]
  await loaders[1]!.connect()
  const loadStarted = performance.now()
  await loadClicks(loaders, { clicks: clickCount, domainId, linkIds, end, days: DAYS, visitors: Math.max(1000, Math.round(clickCount / 5)), log })
  const loadMs = performance.now() - loadStarted
  await loaders[1]!.end()

  const to = Math.floor(end.getTime() / 1000) + 1
  const from = to - (DAYS + 1) * DAY
  const [{ n: expected } = { n: "0" }] = (
    await client.query<{ n: string }>("SELECT count(*) AS n FROM clicks WHERE domain_id = $1 AND at >= to_timestamp($2) AND at < to_timestamp($3)", [domainId, from, to])
  ).rows
  const clicksUrl = `${api}/${domainId}/export/clicks.csv?from_unix=${from}&to_unix=${to}`

  // Settle, then the resident set before each download, and its peak reset. The same export is
  // downloaded BENCH_FAST_RUNS times (default 2): memory held per row would grow with each run, a
  // heap the garbage collector has not yet shrunk does not.
  const fastRuns: Array<{
    readonly download: Download
    readonly before: number
    readonly heapBefore: number
    readonly rss: number
    readonly hwm: number
    readonly heap: number
    readonly rssQuarters: ReadonlyArray<number>
    readonly heapQuarters: ReadonlyArray<number>
    readonly cpuSeconds: number
  }> = []
  for (let round = 0; round < Math.max(1, fastRunCount); round++) {
    await sleep(2000)
    const before = (await memoryOf(service.pid)).rss
    const heapBefore = await heapUsedKiB(service.baseUrl)
    await writeFile(`/proc/${service.pid}/clear_refs`, "5").catch((error: unknown) => log(`cannot reset VmHWM: ${String(error)}`))
    const ticksBefore = await cpuTicksOf(service.pid)
    const stopSampling = sampleMemory(service.pid, service.baseUrl)
    const fast = await download(clicksUrl, token)
    const peak = await stopSampling()
    const ticksAfter = await cpuTicksOf(service.pid)
    const cpuSeconds = ticksBefore === undefined || ticksAfter === undefined ? Number.NaN : (ticksAfter.own - ticksBefore.own) / 100
    fastRuns.push({ download: fast, before, heapBefore, ...peak, hwm: (await memoryOf(service.pid)).hwm, cpuSeconds })
  }
  const fast = fastRuns[0]!.download

  let slow: { readonly download: Download; readonly rss: number; readonly heap: number; readonly before: number } | undefined
  if (slowSeconds > 0) {
    await sleep(2000)
    const before = (await memoryOf(service.pid)).rss
    const stopSlow = sampleMemory(service.pid, service.baseUrl)
    const paced = await download(clicksUrl, token, { bytesPerSecond: slowKiBPerSecond * 1024, limitMs: slowSeconds * 1000 })
    const peak = await stopSlow()
    slow = { download: paced, rss: peak.rss, heap: peak.heap, before }
  }

  const links = await download(`${api}/${domainId}/export/links.csv`, token)

  const failures: Array<string> = []
  if (fast.status !== 200) failures.push(`clicks export answered ${fast.status}: ${fast.head}`)
  if (fast.records !== Number(expected) + 1) failures.push(`clicks export: ${fast.records - 1} rows, ${expected} clicks in the database`)
  if (links.status !== 200 || links.records !== linkCount + 1) failures.push(`links export: status ${links.status}, ${links.records - 1} rows of ${linkCount}`)
  if (slow !== undefined && slow.download.status !== 200) failures.push(`slow download answered ${slow.download.status}`)
  for (const run of fastRuns.slice(1)) if (run.download.bytes !== fast.bytes) failures.push(`download sizes differ: ${run.download.bytes} and ${fast.bytes}`)

  const quarters = (values: ReadonlyArray<number>) => values.map((kib) => (Number.isNaN(kib) ? "-" : mib(kib))).join(" / ")
  const complete = fastRuns.every((run) => run.download.status === 200 && run.download.records === Number(expected) + 1)
  const rows = [
    ["clicks exported", Number(expected).toLocaleString("en-US")],
    ["CSV size", `${mib(fast.bytes / 1024)} MiB (${Math.round(fast.bytes / Math.max(1, Number(expected)))} B a row)`],
    ...fastRuns.flatMap((run, n) => [
      [
        `download ${n + 1}`,
        `${seconds(run.download.ms)} (first byte ${run.download.firstByteMs.toFixed(0)} ms): ` +
          `${Math.round(Number(expected) / (run.download.ms / 1000)).toLocaleString("en-US")} rows/s, ${mib(run.download.bytes / 1024 / (run.download.ms / 1000))} MiB/s, ` +
          `service CPU ${run.cpuSeconds.toFixed(1)} s (${((run.cpuSeconds / Math.max(1, Number(expected))) * 1e6).toFixed(2)} µs a row)`
      ],
      [
        `download ${n + 1} memory`,
        `RSS ${mib(run.before)} before, peak ${mib(run.rss)} sampled / ${mib(run.hwm)} VmHWM; main heap in use ${mib(run.heapBefore)} before, peak ${mib(run.heap)} MiB`
      ],
      [`download ${n + 1} peaks by quarter`, `RSS ${quarters(run.rssQuarters)} MiB; heap in use ${quarters(run.heapQuarters)} MiB`]
    ]),
    [
      "constant memory",
      `${complete ? "PASS" : "FAIL"}: ${fastRuns.length} downloads of ${mib(fast.bytes / 1024)} MiB through a main heap capped at ${heapCapMiB} MiB` +
        (heapCapMiB === 0 ? " (no cap: BENCH_SERVICE_HEAP_MIB=0)" : "")
    ],
    ...(slow === undefined
      ? []
      : [
          [
            `slow client (${slowKiBPerSecond} KiB/s for ${slowSeconds} s)`,
            `${mib(slow.download.bytes / 1024)} MiB read; RSS ${mib(slow.before)} before, peak ${mib(slow.rss)} MiB; main heap in use peak ${mib(slow.heap)} MiB`
          ]
        ]),
    ["links export", `${linkCount} rows in ${links.ms.toFixed(0)} ms`]
  ]
  process.stdout.write(
    [
      `Export benchmark: node ${process.version}, nproc ${availableParallelism()}, load average ${loadavg().map((n) => n.toFixed(2)).join(" ")}, database ${database.kind}`,
      `load: ${clickCount.toLocaleString("en-US")} clicks in ${seconds(loadMs)}`,
      formatTable(["measure", "value"], rows),
      ...failures.map((failure) => `FAILED: ${failure}`),
      ""
    ].join("\n")
  )
  return failures.length === 0 ? 0 : 1
}

runProgram("bench:export", run)
