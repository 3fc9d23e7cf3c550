import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { setTimeout as sleep } from "node:timers/promises"
import type { Cleanup } from "./Cleanup.ts"
import { freePort } from "./FreePort.ts"
import { metricsOf, sample } from "./Metrics.ts"
import { type MixedLoadResult, startMixedLoad, type Tally } from "./MixedLoad.ts"
import { startNginx } from "./Nginx.ts"
import { startService } from "./ServiceProcess.ts"
import { accessTokenOf, ADMIN_EMAIL, ADMIN_PASSWORD, benchServiceEnv, requestJson } from "./Setup.ts"
import { hit, makeShortLinks, statuses } from "./Traffic.ts"

/**
 * The fault group "restart" of `npm run faults`: two instances on one PostgreSQL database behind
 * Debian's nginx running the guide's configuration (docs/nginx.conf), under 2,000 redirects/s plus
 * API reads and link creations through nginx.
 *
 * 1. Rolling restart by the guide's procedure (docs/DEPLOYING.md): SIGTERM to the instance's process
 *    group (as `systemctl restart` sends it), wait for its exit, start it again, wait until its
 *    /readyz answers 200, wait AFTER_READY_SECONDS, then the next instance. No request may fail and
 *    every answered redirect must be a stored click.
 * 2. SIGKILL of one instance under the same load: the requests that fail and the clicks lost,
 *    against the bound of docs/RELIABILITY.md.
 */

export interface FaultRow {
  readonly scenario: string
  readonly measured: string
  readonly expected: string
  readonly ok: boolean
}

const LINKS = 200
const PREFIX = "r"
const SHORT_HOST = "restart.example"
/** The guide's example API host, which the configuration names. */
const API_HOST = "api.example.com"
const DRAIN_SECONDS = 3
/** The guide's procedure: after /readyz answers 200, this long before the next instance stops (fail_timeout=2s, plus nginx's one-second clock). */
const AFTER_READY_SECONDS = 5
const LOAD = { redirectsPerSecond: 2000, readsPerSecond: 20, createsPerSecond: 10 }

const storedClicks = async (dbUrl: string, domainId: number) => {
  const client = new pg.Client({ connectionString: dbUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ n: string }>("SELECT count(*) AS n FROM clicks WHERE domain_id = $1", [domainId])
    return Number(rows[0]?.n ?? 0)
  } finally {
    await client.end()
  }
}

const settled = async (count: () => Promise<number>, target: number, ms: number) => {
  const deadline = Date.now() + ms
  let now = await count()
  while (now < target && Date.now() < deadline) {
    await sleep(250)
    now = await count()
  }
  return now
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/** What nginx logged about its upstreams, by kind. */
const upstreamEvents = (lines: ReadonlyArray<string>) => {
  const kinds: Array<readonly [string, RegExp]> = [
    ["refused connects", /connect\(\) failed \(111/],
    ["resets", /\(104: Connection reset by peer\)/],
    ["early closes", /upstream prematurely closed/],
    ["timeouts", /upstream timed out/],
    ["no live upstreams", /no live upstreams/]
  ]
  const counts = kinds
    .map(([name, pattern]) => [name, lines.filter((line) => pattern.test(line)).length] as const)
    .filter(([, count]) => count > 0)
  return counts.length === 0 ? "nothing" : counts.map(([name, count]) => `${count} ${name}`).join(", ")
}

const failures = (load: MixedLoadResult) => load.redirects.failed + load.reads.failed + load.creates.failed
const kind = (name: string, tally: Tally) =>
  `${name} ${tally.failed} (${statuses(tally.byStatus)}${tally.skipped > 0 ? `, ${tally.skipped} not sent: all connections busy` : ""})`
const failedByKind = (load: MixedLoadResult) =>
  [kind("redirects", load.redirects), kind("API reads", load.reads), kind("creations", load.creates)].join("; ")

export const rollingRestart = async (cleanup: Cleanup, databaseEnv: Record<string, string>, dbUrl: string): Promise<Array<FaultRow>> => {
  const rows: Array<FaultRow> = []
  const ports = [await freePort(), await freePort()] as const
  const env = benchServiceEnv({ ...databaseEnv, SHUTDOWN_DRAIN_SECONDS: String(DRAIN_SECONDS), TRUST_PROXY: "127.0.0.1" })
  const start = (port: number) => startService(cleanup, { port, env, readyTimeoutMs: 60_000, processGroup: true })
  const instances = [await start(ports[0]), await start(ports[1])]
  const nginx = await startNginx(cleanup, ports, await freePort())

  const direct = `${instances[0]!.baseUrl}/api/v4`
  const token = accessTokenOf(
    (await requestJson("POST", `${direct}/access_token`, { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).json
  )
  const domainId = await makeShortLinks(direct, token, SHORT_HOST, PREFIX, LINKS)
  const clicks = () => storedClicks(dbUrl, domainId)

  const apiHost = `${API_HOST}:${nginx.port}`
  const auth = { authorization: `Bearer ${token}` }
  const short = (path: string) => hit(nginx.baseUrl, path, { host: SHORT_HOST, headers: auth })
  const api = (path: string) => hit(nginx.baseUrl, path, { host: apiHost, headers: auth })
  const routes = {
    shortLink: await short(`/${PREFIX}0`),
    shortMetrics: await short("/metrics"),
    shortApi: await short("/api/v4/domains"),
    apiList: await api("/api/v4/domains"),
    apiDocs: await api("/api/docs"),
    apiMetrics: await api("/metrics"),
    apiReady: await api("/readyz")
  }
  const keepsPort = routes.apiList.body.includes(`http://${apiHost}/api/v4/domains`)
  rows.push({
    scenario: "nginx (docs/nginx.conf): what each host serves",
    measured:
      `short domain: link ${routes.shortLink.status}, /metrics ${routes.shortMetrics.status}, /api/v4/domains ${routes.shortApi.status}; ` +
      `API host: /api/v4/domains ${routes.apiList.status} (pagination URL ${keepsPort ? "keeps" : "LOSES"} the port), ` +
      `/api/docs ${routes.apiDocs.status}, /metrics ${routes.apiMetrics.status}, /readyz ${routes.apiReady.status}`,
    expected: "301, 404, 404; 200 with the port, 403, 404, 404",
    ok:
      routes.shortLink.status === 301 &&
      routes.shortMetrics.status === 404 &&
      routes.shortApi.status === 404 &&
      routes.apiList.status === 200 &&
      keepsPort &&
      routes.apiDocs.status === 403 &&
      routes.apiMetrics.status === 404 &&
      routes.apiReady.status === 404
  })

  const load = () => {
    const started = startMixedLoad({ baseUrl: nginx.baseUrl, shortHost: SHORT_HOST, prefix: PREFIX, links: LINKS, apiHost, token, domainId, ...LOAD })
    cleanup.defer("stop the load", async () => void (await started.stop()))
    return started
  }

  // On stderr, to read beside nginx's error log when a check fails.
  const timeline = (what: string) => process.stderr.write(`restart: ${new Date().toISOString()} ${what}\n`)

  // 1. The rolling restart.
  const before = await settled(clicks, 1, 10_000)
  let logged = (await nginx.errorLines()).length
  const rolling = load()
  await sleep(3000)
  const stops: Array<string> = []
  for (const n of [0, 1] as const) {
    timeline(`SIGTERM to instance ${n + 1} (port ${ports[n]})`)
    const stopping = Date.now()
    const how = await instances[n]!.stop()
    const stopped = Date.now()
    timeline(`instance ${n + 1} exited (${how}); starting it`)
    instances[n] = await start(ports[n])
    timeline(`instance ${n + 1} ready`)
    stops.push(`${how} after ${seconds(stopped - stopping)}, ready ${seconds(Date.now() - stopped)} later`)
    await sleep(AFTER_READY_SECONDS * 1000)
  }
  const rolled = await rolling.stop()
  const rollingLog = (await nginx.errorLines()).slice(logged)
  const answered = rolled.redirects.byStatus["301"] ?? 0
  const stored = (await settled(clicks, before + answered, 30_000)) - before
  rows.push({
    scenario: `rolling restart behind nginx (drain ${DRAIN_SECONDS} s, ${LOAD.redirectsPerSecond} redirects/s): failed answers`,
    measured: `${failedByKind(rolled)}; ${(answered / rolled.seconds).toFixed(0)} redirects/s over ${rolled.seconds.toFixed(0)} s; nginx logged ${upstreamEvents(rollingLog)}`,
    expected: "0 of every kind",
    ok: failures(rolled) === 0
  })
  rows.push({
    scenario: "rolling restart: clicks stored / redirects answered",
    measured: `${stored} / ${answered}`,
    expected: "equal",
    ok: stored === answered && answered > 0
  })
  rows.push({
    scenario: "rolling restart: each stop (SIGTERM to the process group)",
    measured: stops.join("; "),
    expected: "code 0",
    ok: stops.every((stop) => stop.startsWith("code 0 "))
  })

  // 2. SIGKILL of one instance; the other serves on.
  const beforeKill = await clicks()
  logged = (await nginx.errorLines()).length
  const survivorAnswered = async () => sample(await metricsOf(instances[1]!.baseUrl), "redirects_total", `status="301"`) ?? 0
  const survivorBefore = await survivorAnswered()
  const killing = load()
  await sleep(3000)
  timeline("SIGKILL to instance 1")
  const createsInFlight = killing.createsInFlight()
  instances[0]!.signal("SIGKILL")
  const killedAt = Date.now()
  const how = await instances[0]!.exited
  await sleep(3000)
  const killed = await killing.stop()
  const killLog = (await nginx.errorLines()).slice(logged)
  const killAnswered = killed.redirects.byStatus["301"] ?? 0
  const byVictim = killAnswered - ((await survivorAnswered()) - survivorBefore)
  const killStored = (await settled(clicks, beforeKill + killAnswered, 20_000)) - beforeKill
  const lost = killAnswered - killStored
  // RELIABILITY.md: a crash loses the clicks still in memory, about 2 s of the instance's clicks at most.
  const victimRate = byVictim / ((killedAt - killing.startedAt) / 1000)
  const bound = Math.ceil(2 * victimRate)
  rows.push({
    scenario: "SIGKILL of one instance behind nginx: failed answers",
    measured: `${how}; ${failedByKind(killed)}; nginx logged ${upstreamEvents(killLog)}`,
    expected: `redirects and reads 0 (nginx retries them); creations <= ${createsInFlight}, those in flight at the kill (retried too, but one the killed instance had stored finds its alias taken)`,
    ok: killed.redirects.failed === 0 && killed.reads.failed === 0 && killed.creates.failed <= createsInFlight
  })
  rows.push({
    scenario: "SIGKILL of one instance behind nginx: clicks lost",
    measured: `${killAnswered} answered (${byVictim} by the killed instance, ~${victimRate.toFixed(0)}/s), ${killStored} stored: ${lost} lost`,
    expected: `0 <= lost <= ${bound} (2 s of the killed instance's clicks)`,
    ok: lost >= 0 && lost <= bound
  })
  for (const instance of instances) await instance.stop()
  if (rows.some((row) => !row.ok)) {
    const kept = join(tmpdir(), `links-faults-nginx-${Date.now()}.log`)
    await nginx.keepErrorLog(kept)
    process.stderr.write(`restart: nginx's error log is kept in ${kept}\n`)
  }
  return rows
}
