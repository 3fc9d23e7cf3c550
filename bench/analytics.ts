/**
 * Latency benchmark of the click analytics reports (E16-E30, R1) of the real server process
 * over a year of clicks. `npm run bench:analytics`; PostgreSQL only (BENCH_DATABASE_URL or
 * DATABASE_URL names the server: a fresh database is made there and dropped at the end), e.g.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:analytics
 *
 * Setup: the service is started on the new database (its bootstrap admin's account is on the
 * enterprise plan, so analytics are allowed), one domain and 1,000 links are created through the API,
 * then BENCH_CLICKS clicks (default 10,000,000) over the 365 days before now are loaded by SQL
 * (bench/support/ClickLoad.ts: INSERT ... SELECT over generate_series per monthly partition, then
 * the daily rollups, link_visitors, links.click_count and links.last_clicked computed from the clicks
 * with the semantics of ClickRepo.insert, then VACUUM ANALYZE). Link popularity, geography and
 * referrers are skewed like real traffic; about 5% bots and 3% QR scans. BENCH_BURST_CLICKS more
 * (default 150,000) fall in the hour before the load, a burst inside today. BENCH_LOAD_CONNECTIONS
 * (default 2, one per core here) sets how many connections share the load.
 *
 * Check: the E17 daily counts (and scan counts) summed over a whole-day year window and over an
 * unaligned one equal the non-bot clicks (and QR scans) counted in `clicks` directly; E23 of the most
 * clicked link equals its clicks, QR scans and distinct address hashes.
 *
 * Measured: every report sequentially, BENCH_REQUESTS requests (default 30) after BENCH_WARMUP ones
 * (default 3), over four windows: a year of whole UTC days (rollups only), a year from now - 365 days
 * to now (partial days at both edges corrected from the clicks), a week of whole days and a week ending
 * now; and inside today, the two hours to now and the burst's last half hour to now (windows that cut
 * hours). Domain reports E16 and E17-E22 (user_id=all) over all of them, E17 and E20 with a keyword every
 * link matches over the two inside today; for the most clicked link and the
 * median link E23 (lifetime, and windowed), E24, E25-E30 and R1 (page 1) over all but the week of
 * whole days (lifetime figures and R1 have no window). The domain reports E17-E22 over the year
 * windows are also run with BENCH_CONCURRENCY clients at once (default 4; 0 or 1 skips those rows).
 * BENCH_LOAD_ONLY=1 stops after the load. On 2 cores the whole run takes about 6 minutes at 10
 * million clicks: about 3 to load, 2 to measure.
 *
 * Exit code 1 when the service does not start, any answer is not a 200, or the check finds a
 * mismatch. The target (p95 < 100 ms for E17-E22) is printed PASS/FAIL but does NOT set the exit
 * code: it depends on the machine and on what else runs on it.
 */
import { availableParallelism, loadavg } from "node:os"
import pg from "pg"
import { kindIs } from "../src/Clicks/Rollups.ts"
import { benchDatabase } from "./support/BenchDatabase.ts"
import { type Cleanup, runProgram } from "./support/Cleanup.ts"
import { numberFromEnv } from "./support/Env.ts"
import { loadClicks } from "./support/ClickLoad.ts"
import { requestJson, startAdminService } from "./support/Setup.ts"
import { formatTable } from "./support/Table.ts"
import { percentile } from "./support/Percentile.ts"

const DOMAIN = "bench.example"
const LINKS = 1000
const SETUP_CONCURRENCY = 8
const DAYS = 365
const DAY = 86_400
const TARGET_MS = 100

const clickCount = numberFromEnv("BENCH_CLICKS", 10_000_000)
const burstClicks = numberFromEnv("BENCH_BURST_CLICKS", 150_000)
const BURST_SECONDS = 3600
const requestsPerRow = Math.max(1, numberFromEnv("BENCH_REQUESTS", 30))
const warmUps = numberFromEnv("BENCH_WARMUP", 3)
const concurrency = numberFromEnv("BENCH_CONCURRENCY", 4)
const loadConnections = Math.max(1, numberFromEnv("BENCH_LOAD_CONNECTIONS", 2))
const loadOnly = process.env.BENCH_LOAD_ONLY === "1"

const loadAverage = () => loadavg().map((n) => n.toFixed(2)).join(" ")
const log = (line: string) => process.stderr.write(`${line}\n`)
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

// ---------------------------------------------------------------------------------------------------
// Answers

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const objectsOf = (json: unknown): ReadonlyArray<unknown> => {
  const objects = isRecord(json) ? json.objects : undefined
  if (!Array.isArray(objects)) throw new Error(`no objects in ${JSON.stringify(json).slice(0, 300)}`)
  return objects
}

const metaNumber = (json: unknown, field: string): number | undefined => {
  const meta = isRecord(json) ? json.meta : undefined
  const value = isRecord(meta) ? meta[field] : undefined
  return typeof value === "number" ? value : undefined
}

const numberField = (row: unknown, field: string): number => {
  const value = isRecord(row) ? row[field] : undefined
  if (typeof value !== "number") throw new Error(`no number ${field} in ${JSON.stringify(row).slice(0, 300)}`)
  return value
}

interface Answer {
  readonly status: number
  readonly ms: number
  readonly text: string
}

const get = async (url: string, token: string): Promise<Answer> => {
  const started = performance.now()
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  const text = await response.text()
  return { status: response.status, ms: performance.now() - started, text }
}

/** A 200's JSON, or an error naming the request and its answer. */
const getJson = async (url: string, token: string): Promise<unknown> => {
  const answer = await get(url, token)
  if (answer.status !== 200) throw new Error(`GET ${url} answered ${answer.status}: ${answer.text.slice(0, 300)}`)
  return JSON.parse(answer.text)
}

// ---------------------------------------------------------------------------------------------------
// Windows and reports

interface Window {
  readonly label: string
  readonly from: number
  readonly to: number
}

interface Probe {
  readonly report: string
  readonly subject: string
  readonly window: string
  readonly url: string
  readonly concurrency: number
  /** Whether the p95 target applies (E17-E22). */
  readonly target: boolean
}

interface Result {
  readonly probe: Probe
  readonly p50: number
  readonly p95: number
  readonly max: number
  readonly rows: string
  readonly total: string
  /** Answers other than 200, and the first few of them. */
  readonly non200: number
  readonly failures: ReadonlyArray<string>
}


const runProbe = async (probe: Probe, token: string): Promise<Result> => {
  const failures: Array<string> = []
  let non200 = 0
  const check = (answer: Answer) => {
    if (answer.status !== 200) {
      non200 += 1
      if (failures.length < 3) failures.push(`${answer.status} ${answer.text.slice(0, 200)}`)
    }
    return answer
  }
  let last: Answer | undefined
  for (let n = 0; n < warmUps; n++) last = check(await get(probe.url, token))
  const latencies: Array<number> = []
  let next = 0
  await Promise.all(
    Array.from({ length: probe.concurrency }, async () => {
      while (next < requestsPerRow) {
        next += 1
        const answer = check(await get(probe.url, token))
        latencies.push(answer.ms)
        last = answer
      }
    })
  )
  latencies.sort((a, b) => a - b)
  let rows = "?"
  let total = "-"
  if (last !== undefined && last.status === 200) {
    const json: unknown = JSON.parse(last.text)
    // E23 answers one top-level object, the reports a page of objects.
    rows = isRecord(json) && !("objects" in json) ? "1" : String(objectsOf(json).length)
    total = String(metaNumber(json, "total") ?? "-")
  }
  return {
    probe,
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    max: latencies[latencies.length - 1] ?? Number.NaN,
    rows,
    total,
    non200,
    failures
  }
}

const query = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, String(value))
  const text = search.toString()
  return text === "" ? "" : `?${text}`
}

const GROUPED = ["country", "region", "city", "device", "referrer"] as const

const probesOf = (
  api: string,
  domainId: number,
  windows: ReadonlyArray<Window>,
  linkWindows: ReadonlyArray<Window>,
  links: ReadonlyArray<{ readonly id: number; readonly label: string }>
): Array<Probe> => {
  const probes: Array<Probe> = []
  const add = (report: string, subject: string, window: Window | undefined, path: string, extra: Record<string, string>, target: boolean, conc = 1) =>
    probes.push({
      report,
      subject,
      window: window?.label ?? "none",
      url: `${api}${path}${query({ ...extra, from_unix: window?.from, to_unix: window?.to })}`,
      concurrency: conc,
      target
    })
  const all = { user_id: "all" }
  // A keyword every link matches: the report counts chosen links (per-link rollups), not owners.
  const everyLink = { user_id: "all", keyword: "example.com/landing" }
  for (const window of windows) {
    add("E16 links/clicked", "domain", window, `/${domainId}/links/clicked`, {}, false)
    add("E17 clicks/daily", "domain", window, `/${domainId}/clicks/daily`, all, true)
    GROUPED.forEach((group, n) =>
      add(`E${18 + n} clicks/${group}`, "domain", window, `/${domainId}/clicks/${group}`, all, true)
    )
    if (window.from > window.to - 86_400) {
      add("E17 clicks/daily", "keyword, every link", window, `/${domainId}/clicks/daily`, everyLink, true)
      add("E20 clicks/city", "keyword, every link", window, `/${domainId}/clicks/city`, everyLink, true)
    }
  }
  if (concurrency > 1) {
    for (const window of windows.filter((w) => w.label.startsWith("year"))) {
      add("E17 clicks/daily", "domain", window, `/${domainId}/clicks/daily`, all, true, concurrency)
      GROUPED.forEach((group, n) =>
        add(`E${18 + n} clicks/${group}`, "domain", window, `/${domainId}/clicks/${group}`, all, true, concurrency)
      )
    }
  }
  for (const link of links) {
    const base = `/${domainId}/links/${link.id}`
    add("E23 clicks (lifetime)", link.label, undefined, `${base}/clicks`, {}, false)
    add("R1 rawclicks page 1", link.label, undefined, `${base}/rawclicks`, { page: "1" }, false)
    for (const window of linkWindows) {
      add("E23 clicks", link.label, window, `${base}/clicks`, {}, false)
      add("E24 clicks/hourly", link.label, window, `${base}/clicks/hourly`, {}, false)
      add("E25 clicks/daily", link.label, window, `${base}/clicks/daily`, {}, false)
      GROUPED.forEach((group, n) => add(`E${26 + n} clicks/${group}`, link.label, window, `${base}/clicks/${group}`, {}, false))
    }
  }
  return probes
}

// ---------------------------------------------------------------------------------------------------
// Checks of the load against the clicks

/** Every page of E17 over the window, summed. */
const dailySums = async (api: string, domainId: number, token: string, window: Window) => {
  let count = 0
  let scans = 0
  let days = 0
  for (let page = 1, last = 1; page <= last; page++) {
    const json = await getJson(
      `${api}/${domainId}/clicks/daily${query({ user_id: "all", from_unix: window.from, to_unix: window.to, page })}`,
      token
    )
    last = metaNumber(json, "last_page") ?? 1
    for (const row of objectsOf(json)) {
      count += numberField(row, "count")
      scans += numberField(row, "scan_count")
      days += 1
    }
  }
  return { count, scans, days }
}

const verify = async (
  client: pg.Client,
  api: string,
  domainId: number,
  token: string,
  windows: ReadonlyArray<Window>,
  topLinkId: number
): Promise<Array<string>> => {
  const lines: Array<string> = []
  const problems: Array<string> = []
  for (const window of windows) {
    const reported = await dailySums(api, domainId, token, window)
    const { rows } = await client.query<{ clicks: string; scans: string }>(
      `SELECT count(*) AS clicks, count(*) FILTER (WHERE qr) AS scans FROM clicks
       WHERE domain_id = $1 AND NOT bot AND at >= to_timestamp($2) AND at < to_timestamp($3)`,
      [domainId, window.from, window.to]
    )
    const clicks = Number(rows[0]?.clicks)
    const scans = Number(rows[0]?.scans)
    const ok = reported.count === clicks && reported.scans === scans
    const line = `E17 over ${window.label} (${reported.days} days): sum of count ${reported.count}, of scan_count ${reported.scans}; clicks table: ${clicks} non-bot, ${scans} QR -> ${ok ? "equal" : "MISMATCH"}`
    lines.push(line)
    if (!ok) problems.push(line)
    // E21 reads whole months from the monthly rollups: its rows must add up to the same clicks.
    const devices = objectsOf(
      await getJson(`${api}/${domainId}/clicks/device${query({ user_id: "all", from_unix: window.from, to_unix: window.to })}`, token)
    ).reduce((sum: number, row) => sum + numberField(row, "count"), 0)
    const deviceLine = `E21 over ${window.label}: sum of count ${devices}; clicks table: ${clicks} non-bot -> ${devices === clicks ? "equal" : "MISMATCH"}`
    lines.push(deviceLine)
    if (devices !== clicks) problems.push(deviceLine)
  }
  const lifetime = await getJson(`${api}/${domainId}/links/${topLinkId}/clicks`, token)
  const { rows } = await client.query<{ clicks: string; scans: string; unique: string }>(
    `SELECT count(*) AS clicks, count(*) FILTER (WHERE qr) AS scans, count(DISTINCT ip_hash) AS unique
     FROM clicks WHERE link_id = $1 AND NOT bot`,
    [topLinkId]
  )
  const expected = { total: Number(rows[0]?.clicks), scan_count: Number(rows[0]?.scans), unique: Number(rows[0]?.unique) }
  const got = {
    total: numberField(lifetime, "total"),
    scan_count: numberField(lifetime, "scan_count"),
    unique: numberField(lifetime, "unique")
  }
  const ok = got.total === expected.total && got.scan_count === expected.scan_count && got.unique === expected.unique
  const line = `E23 of link ${topLinkId}: ${JSON.stringify(got)}; clicks table: ${JSON.stringify(expected)} -> ${ok ? "equal" : "MISMATCH"}`
  lines.push(line)
  if (!ok) problems.push(line)
  process.stdout.write(`checks:\n${lines.map((l) => `  ${l}`).join("\n")}\n\n`)
  return problems
}

// ---------------------------------------------------------------------------------------------------

const tableSizes = async (client: pg.Client) => {
  const tables = ["clicks", "user_agents", "click_rollups", "click_rollups_user", "click_rollups_hour", "click_rollups_user_hour", "link_visitors", "links"]
  const rows: Array<Array<string>> = []
  for (const table of tables) {
    const { rows: found } = await client.query<{ found: boolean }>("SELECT to_regclass($1) IS NOT NULL AS found", [table])
    if (found[0]?.found !== true) continue
    const { rows: sized } = await client.query<{ n: string; bytes: string; partitions: string }>(
      `SELECT (SELECT count(*) FROM ${table}) AS n,
              pg_total_relation_size('${table}'::regclass)
                + coalesce((SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits WHERE inhparent = '${table}'::regclass), 0) AS bytes,
              (SELECT count(*) FROM pg_inherits WHERE inhparent = '${table}'::regclass) AS partitions`
    )
    const row = sized[0]
    const partitions = Number(row?.partitions ?? 0)
    rows.push([
      partitions > 0 ? `${table} (${partitions} partitions)` : table,
      Number(row?.n ?? 0).toLocaleString("en-US"),
      (Number(row?.bytes ?? 0) / 1024 / 1024).toFixed(1)
    ])
  }
  return formatTable(["table", "rows", "MiB with indexes"], rows)
}

const domainIdOf = (json: unknown): number => {
  const first = objectsOf(json)[0]
  return numberField(first, "id")
}

const run = async (cleanup: Cleanup): Promise<number> => {
  if (!(process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL)) {
    process.stderr.write(
      "bench:analytics needs PostgreSQL (10 million clicks do not belong in embedded PGlite): set BENCH_DATABASE_URL, e.g.\n" +
        "  BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:analytics\n"
    )
    return 1
  }
  const database = await benchDatabase(cleanup)
  const databaseUrl = database.env.DATABASE_URL
  if (databaseUrl === undefined) throw new Error("benchDatabase gave no DATABASE_URL")
  const { api, token, credentials } = await startAdminService(cleanup, database.env)
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "bench-analytics" })
  await client.connect()
  cleanup.defer("close the bench's database connection", () => client.end())

  const { rows: accounts } = await client.query<{ user_id: string; plan: string }>(
    "SELECT u.id AS user_id, a.plan FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.email = $1",
    [credentials.email]
  )
  const admin = accounts[0]
  if (admin === undefined) throw new Error(`no user ${credentials.email}`)
  if (admin.plan === "free") await client.query("UPDATE accounts SET plan = 'team' WHERE plan = 'free'")

  const setupStarted = performance.now()
  const domainId = domainIdOf((await requestJson("POST", `${api}/domains`, { token, body: { domain: DOMAIN } })).json)
  const linkIds: Array<number> = new Array<number>(LINKS)
  let next = 0
  await Promise.all(
    Array.from({ length: SETUP_CONCURRENCY }, async () => {
      for (let n = next++; n < LINKS; n = next++) {
        const created = await requestJson("POST", `${api}/${domainId}/links`, {
          token,
          body: { url: `https://example.com/landing/${n}?src=bench`, alias: `l${n}`, override_404_check: 1 }
        })
        linkIds[n] = numberField(objectsOf(created.json)[0], "id")
      }
    })
  )
  const setupMs = performance.now() - setupStarted

  // Popularity by rank, shuffled over the links (a stride coprime to 1,000), so that the most
  // clicked links are not simply the first created.
  const byRank = Array.from({ length: LINKS }, (_, rank) => linkIds[(rank * 337) % LINKS]!)
  process.stdout.write(
    [
      `Analytics benchmark: node ${process.version}, nproc ${availableParallelism()}, database ${database.kind}`,
      `setup: 1 domain and ${LINKS} links through the API in ${seconds(setupMs)} (plan ${admin.plan}, user ${admin.user_id})`,
      `loading ${clickCount.toLocaleString("en-US")} clicks over the ${DAYS} days before now...`
    ].join("\n") + "\n"
  )
  const loaders = [client]
  while (loaders.length < loadConnections) {
    const loader = new pg.Client({ connectionString: databaseUrl, application_name: "bench-analytics-load" })
    await loader.connect()
    loaders.push(loader)
  }
  const end = new Date()
  const loadStarted = performance.now()
  const timings = await loadClicks(loaders, {
    clicks: clickCount,
    domainId,
    linkIds: byRank,
    end,
    days: DAYS,
    visitors: Math.max(1000, Math.round(clickCount / 5)),
    burst: { clicks: burstClicks, seconds: BURST_SECONDS },
    log
  })
  const loadMs = performance.now() - loadStarted
  for (const loader of loaders.slice(1)) await loader.end()
  process.stdout.write(
    [
      `load: ${seconds(loadMs)} in all (${loaders.length} connections): clicks ${seconds(timings.clicksMs)} (${timings.months} monthly partitions, ` +
        `${Math.round(clickCount / (timings.clicksMs / 1000)).toLocaleString("en-US")} rows/s), ` +
        `rollups ${seconds(timings.rollupsMs)}, ` +
        `link_visitors ${timings.visitorsTable ? seconds(timings.visitorsMs) : "(no such table)"}, ` +
        `links ${seconds(timings.linksMs)}, VACUUM ANALYZE ${seconds(timings.vacuumMs)}`,
      ""
    ].join("\n") + "\n"
  )

  const { rows: profile } = await client.query<{
    bots: string
    top: string
    median: string
    top_id: string
    median_id: string
    top10: string
    places: string
    cities: string
    referrers: string
  }>(
    `SELECT (SELECT count(*) FROM clicks WHERE bot) AS bots,
            (SELECT id FROM links ORDER BY click_count DESC, id LIMIT 1) AS top_id,
            (SELECT click_count FROM links ORDER BY click_count DESC, id LIMIT 1) AS top,
            (SELECT id FROM links ORDER BY click_count DESC, id OFFSET ${LINKS / 2} LIMIT 1) AS median_id,
            (SELECT click_count FROM links ORDER BY click_count DESC, id OFFSET ${LINKS / 2} LIMIT 1) AS median,
            (SELECT sum(click_count) FROM (SELECT click_count FROM links ORDER BY click_count DESC LIMIT 10) t) AS top10,
            (SELECT count(*) FROM (SELECT DISTINCT value, region, city FROM click_rollups_user r WHERE ${kindIs("place", "r")}) t)
              AS places,
            (SELECT count(DISTINCT (value, region, city)) FROM click_rollups_user r WHERE ${kindIs("place", "r")} AND city <> '')
              AS cities,
            (SELECT count(DISTINCT value) FROM click_rollups_user r WHERE ${kindIs("referrer", "r")}) AS referrers`
  )
  const shape = profile[0]
  if (shape === undefined) throw new Error("no profile of the data")
  const topLinkId = Number(shape.top_id)
  const medianLinkId = Number(shape.median_id)
  process.stdout.write(
    `data: ${Number(shape.bots).toLocaleString("en-US")} bot clicks; most clicked link ${topLinkId} ` +
      `(${Number(shape.top).toLocaleString("en-US")} non-bot clicks, top 10 links ${Number(shape.top10).toLocaleString("en-US")}), ` +
      `median link ${medianLinkId} (${Number(shape.median).toLocaleString("en-US")}); ` +
      `${shape.places} places (${shape.cities} known cities), ${shape.referrers} referrers\n\n`
  )
  process.stdout.write(`${await tableSizes(client)}\n\n`)
  if (loadOnly) return 0

  const now = Math.floor(Date.now() / 1000)
  const today = Math.floor(now / DAY) * DAY
  const windows: ReadonlyArray<Window> = [
    { label: "year, whole days", from: today - (DAYS - 1) * DAY, to: today + DAY },
    { label: "year, to now", from: now - DAYS * DAY, to: now },
    { label: "week, whole days", from: today - 6 * DAY, to: today + DAY },
    { label: "week, to now", from: now - 7 * DAY, to: now }
  ]
  // Inside today, around the burst: its last half hour and the two hours before now.
  const loaded = Math.floor(end.getTime() / 1000)
  const burstWindows: ReadonlyArray<Window> =
    burstClicks === 0
      ? []
      : [
          { label: "2 h to now", from: now - 2 * 3600, to: now },
          { label: "burst's last 30 min", from: loaded - 1800, to: now }
        ]
  const problems = await verify(client, api, domainId, token, [...windows.slice(0, 2), ...burstWindows], topLinkId)

  const linkWindows = windows.filter((w) => w.label !== "week, whole days")
  const probes = probesOf(api, domainId, [...windows, ...burstWindows], linkWindows, [
    { id: topLinkId, label: `top link ${topLinkId}` },
    { id: medianLinkId, label: `median link ${medianLinkId}` }
  ])
  process.stdout.write(`load average before measuring: ${loadAverage()}\n\n`)
  log(`measuring ${probes.length} rows, ${warmUps} warm-up + ${requestsPerRow} requests each...`)
  const measureStarted = performance.now()
  const results: Array<Result> = []
  for (const probe of probes) results.push(await runProbe(probe, token))
  const measureMs = performance.now() - measureStarted

  const verdict = (result: Result) => (!result.probe.target ? "-" : result.p95 < TARGET_MS ? "PASS" : "FAIL")
  process.stdout.write(
    formatTable(
      ["report", "subject", "window", "conc", "p50 ms", "p95 ms", "max ms", "rows", "total", "non-200", `p95 < ${TARGET_MS} ms`],
      results.map((r) => [
        r.probe.report,
        r.probe.subject,
        r.probe.window,
        String(r.probe.concurrency),
        r.p50.toFixed(1),
        r.p95.toFixed(1),
        r.max.toFixed(1),
        r.rows,
        r.total,
        String(r.non200),
        verdict(r)
      ])
    ) + "\n\n"
  )
  const targeted = results.filter((r) => r.probe.target)
  const passed = targeted.filter((r) => r.p95 < TARGET_MS).length
  process.stdout.write(
    [
      `windows: ${windows.map((w) => `${w.label} [${w.from}, ${w.to})`).join("; ")}`,
      `measured in ${seconds(measureMs)}; ${requestsPerRow} requests per row after ${warmUps} warm-up, sequential unless conc > 1`,
      `target p95 < ${TARGET_MS} ms for E17-E22 (reported only; it does not set the exit code): ${passed} of ${targeted.length} rows PASS`,
      `load average after: ${loadAverage()}`
    ].join("\n") + "\n"
  )

  const failed = results.filter((r) => r.non200 > 0)
  for (const r of failed) {
    process.stderr.write(`FAILED: ${r.probe.report} (${r.probe.subject}, ${r.probe.window}) answered ${r.failures.join(" | ")}\n`)
  }
  for (const problem of problems) process.stderr.write(`FAILED: ${problem}\n`)
  return failed.length > 0 || problems.length > 0 ? 1 : 0
}

runProgram("bench", run)
