/**
 * The redirect hot path of the real server process against a bare node:http server (a separate
 * process too) answering the same 301 without any lookup, loaded by the same autocannon settings in
 * the same run. `npm run bench:redirect`; BENCH_SECONDS (default 10), BENCH_WARMUP_SECONDS (default
 * 5), BENCH_CONNECTIONS (default 50), BENCH_ROUNDS (default 3: reference and service runs alternate,
 * and the median run of each is reported, since other work on a small machine skews single runs).
 * PostgreSQL when BENCH_DATABASE_URL or DATABASE_URL is set (a
 * fresh database, dropped at the end), else embedded. After the load the service is stopped with
 * SIGTERM and the clicks in the database are compared with the 301s it answered.
 * Exits 1 on errors, timeouts, unexpected statuses or a click count that differs from the
 * redirects answered; missed speed targets are reported, not failed, since they depend on the machine.
 */
import autocannon from "autocannon"
import { spawn } from "node:child_process"
import { availableParallelism, loadavg } from "node:os"
import pg from "pg"
import { benchDatabase } from "./support/BenchDatabase.ts"
import { Cleanup } from "./support/Cleanup.ts"
import { freePort } from "./support/FreePort.ts"
import { startService } from "./support/ServiceProcess.ts"
import { accessTokenOf, requestJson } from "./support/Setup.ts"
import { formatTable } from "./support/Table.ts"

const ADMIN_EMAIL = "bench@example.com"
const ADMIN_PASSWORD = "bench-password-123"
const DOMAIN = "bench.example"
const LINKS = 1000
const USER_AGENT = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"

const numberFromEnv = (name: string, fallback: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${raw}`)
  return value
}

const seconds = numberFromEnv("BENCH_SECONDS", 10)
const warmUpSeconds = numberFromEnv("BENCH_WARMUP_SECONDS", 5)
const connections = numberFromEnv("BENCH_CONNECTIONS", 50)
const rounds = Math.max(1, Math.round(numberFromEnv("BENCH_ROUNDS", 3)))

const REFERENCE = `
const http = require("node:http")
http.createServer((req, res) => {
  res.writeHead(301, { location: "https://example.com/landing/1?src=bench", "cache-control": "private, max-age=90" })
  res.end()
}).listen(Number(process.argv[1]), "127.0.0.1", () => process.stdout.write("ready\\n"))
`

/** The bare reference in its own process, so that it has a core's event loop like the service. */
const startReference = async (cleanup: Cleanup, port: number) => {
  const child = spawn(process.execPath, ["-e", REFERENCE, String(port)], { stdio: ["ignore", "pipe", "inherit"] })
  cleanup.defer("stop the reference server", async () => {
    child.kill("SIGTERM")
  })
  await new Promise<void>((resolve, reject) => {
    child.stdout.once("data", () => resolve())
    child.once("exit", (code) => reject(new Error(`the reference server exited with ${code}`)))
  })
  return { url: `http://127.0.0.1:${port}`, pid: child.pid ?? 0 }
}

const rssOf = async (pid: number) => {
  const { readFile } = await import("node:fs/promises")
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "")
  const match = /VmRSS:\s+(\d+)/.exec(status)
  return match === null ? undefined : Number(match[1]) / 1024
}

interface Run {
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly redirects: number
  readonly unexpected: number
  readonly errors: number
  readonly timeouts: number
}

const load = async (url: string, host: string | undefined, duration: number): Promise<Run> => {
  let next = 0
  const result = await autocannon({
    url,
    connections,
    duration,
    headers: { "user-agent": USER_AGENT, ...(host === undefined ? {} : { host }) },
    requests: [
      {
        method: "GET",
        setupRequest: (request) => ({ ...request, path: `/l${next++ % LINKS}` })
      }
    ]
  })
  const byStatus = result.statusCodeStats as Record<string, { count: number } | undefined>
  const redirects = byStatus["301"]?.count ?? 0
  const answered = Object.values(byStatus).reduce((sum, entry) => sum + (entry?.count ?? 0), 0)
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    redirects,
    unexpected: answered - redirects,
    errors: result.errors,
    timeouts: result.timeouts
  }
}

const countClicks = async (databaseUrl: string) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ n: string }>("SELECT count(*) AS n FROM clicks")
    return Number(rows[0]?.n ?? 0)
  } finally {
    await client.end()
  }
}

const run = async (cleanup: Cleanup): Promise<number> => {
  const database = await benchDatabase(cleanup)
  const service = await startService(cleanup, {
    port: await freePort(),
    readyTimeoutMs: 60_000,
    env: { ...database.env, RATE_LIMIT_PER_SECOND: "1000000", LOG_LEVEL: "warning", ADMIN_EMAIL, ADMIN_PASSWORD, TOKEN_SECRET: "bench" }
  })
  const api = `${service.baseUrl}/api/v4`
  const token = accessTokenOf((await requestJson("POST", `${api}/access_token`, { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).json)
  await requestJson("POST", `${api}/domains`, { token, body: { domain: DOMAIN } })
  for (let n = 0; n < LINKS; n++) {
    await requestJson("POST", `${api}/1/links`, {
      token,
      body: { url: `https://example.com/landing/${n}?src=bench`, alias: `l${n}`, override_404_check: 1 }
    })
  }
  const reference = await startReference(cleanup, await freePort())

  process.stdout.write(
    [
      `Redirect benchmark: node ${process.version}, nproc ${availableParallelism()}, database ${database.kind}`,
      `${connections} connections, ${seconds} s per run after a ${warmUpSeconds} s warm-up, ${LINKS} links`,
      `load average before: ${loadavg().map((n) => n.toFixed(2)).join(" ")}`
    ].join("\n") + "\n\n"
  )
  const bareRuns: Array<Run> = []
  const serviceRuns: Array<Run> = [await load(service.baseUrl, DOMAIN, warmUpSeconds)]
  await load(reference.url, undefined, warmUpSeconds)
  for (let round = 1; round <= rounds; round++) {
    process.stderr.write(`round ${round} of ${rounds}: reference, then service...\n`)
    bareRuns.push(await load(reference.url, undefined, seconds))
    serviceRuns.push(await load(service.baseUrl, DOMAIN, seconds))
  }
  const bareRss = await rssOf(reference.pid)
  const serviceRss = (await service.rssKiB()) ?? 0
  const median = (runs: ReadonlyArray<Run>) => {
    const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)
    return sorted[Math.floor(sorted.length / 2)]!
  }
  const bare = median(bareRuns)
  const measured = median(serviceRuns.slice(1))
  const perRound = serviceRuns
    .slice(1)
    .map((run, i) => `${bareRuns[i]!.requestsPerSecond.toFixed(0)} / ${run.requestsPerSecond.toFixed(0)}`)
  process.stdout.write(`req/s per round (reference / service): ${perRound.join(", ")}\n`)

  const ratio = measured.requestsPerSecond / bare.requestsPerSecond
  const row = (name: string, r: Run, rss: number | undefined, vs: string) => [
    name,
    String(connections),
    r.requestsPerSecond.toFixed(0),
    r.p50.toFixed(1),
    r.p99.toFixed(1),
    String(r.unexpected),
    `${r.errors}/${r.timeouts}`,
    rss === undefined ? "?" : rss.toFixed(0),
    vs
  ]
  process.stdout.write(
    formatTable(
      ["scenario", "conns", "req/s", "p50 ms", "p99 ms", "not 301", "errors/timeouts", "RSS MiB", "vs reference"],
      [
        row("reference node:http 301 (median run)", bare, bareRss, "reference"),
        row("service GET /<alias> (median run)", measured, serviceRss / 1024, ratio.toFixed(3))
      ]
    ) + "\n\n"
  )

  // The service's own count: autocannon drops the answers still in flight when a run ends.
  const metrics = await fetch(`${service.baseUrl}/metrics`).then((response) => response.text())
  const answered = Number(/^redirects_total\{status="301"\} (\d+)/m.exec(metrics)?.[1] ?? Number.NaN)
  const counted = serviceRuns.reduce((sum, run) => sum + run.redirects, 0)
  process.stdout.write(`301s counted by autocannon: ${counted}; answered by the service: ${answered}\n`)
  let lost = false
  if (database.env.DATABASE_URL === undefined) {
    process.stdout.write(`clicks recorded vs redirects answered: skipped (embedded database)\n`)
  } else {
    await service.stop()
    const recorded = await countClicks(database.env.DATABASE_URL)
    lost = recorded !== answered
    process.stdout.write(`clicks recorded vs redirects answered: ${recorded} / ${answered} (${lost ? "MISMATCH" : "equal"})\n`)
  }
  const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL")
  process.stdout.write(
    [
      `target ratio >= 0.8: ${ratio.toFixed(3)} ${verdict(ratio >= 0.8)}`,
      `target p99 < 10 ms at ${connections} connections: ${measured.p99.toFixed(1)} ms ${verdict(measured.p99 < 10)}`,
      `target every redirect recorded: ${verdict(!lost)}`,
      `load average after: ${loadavg().map((n) => n.toFixed(2)).join(" ")}`
    ].join("\n") + "\n"
  )
  const broken = [...bareRuns, ...serviceRuns].some((r) => r.errors > 0 || r.timeouts > 0 || r.unexpected > 0)
  if (broken) process.stderr.write("FAILED: errors, timeouts or statuses other than 301\n")
  return broken || lost ? 1 : 0
}

const cleanup = new Cleanup()
const finish = async (code: number) => {
  await cleanup.runAll()
  process.exit(code)
}
process.once("SIGINT", () => void finish(130))
process.once("SIGTERM", () => void finish(143))
run(cleanup).then(finish, async (error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`)
  await finish(1)
})
