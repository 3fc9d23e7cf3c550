/**
 * What counting the visits of `max_clicks` links costs PostgreSQL, without HTTP or clicks around it:
 * the service's own PostgreSQL counter (`ClickLimits.layerDatabase`) driven by a fixed number of
 * takes, on a fresh database of BENCH_DATABASE_URL. `npm run bench:limits`.
 *
 * Environment (all optional):
 *   BENCH_LINKS        limited links, taken in turn like bench:redirect's /c0.. (default 100)
 *   BENCH_VISITS       takes in all (default 50000)
 *   BENCH_CONCURRENCY  takes in flight at once, each waiting for its answer (default 50)
 *   BENCH_RATE         takes per second, evenly spaced (default 0: as fast as BENCH_CONCURRENCY goes)
 *   BENCH_PAUSE_SECONDS  a pause after the takes, then 20 takes a link at the same pace (default 2; 0: none)
 *
 * Far from its limit a link's visits are mostly answered from the counter's leases (blocks of
 * slots), so the statements per take fall with the rate. Prints the counter statements sent, the CPU of the bench database's backends and of the whole
 * PostgreSQL server per take (from /proc, so other work on the server counts in the second), the
 * write-ahead log per take, and the takes that waited for a statement (not answered from a lease) and
 * how long, in the run and after the pause.
 */
import { Context, Effect, Exit, Layer, Scope } from "effect"
import pg from "pg"
import { ClickLimits, type ClickLimitsService } from "../src/Redirect/ClickLimits.ts"
import { DatabasePool } from "../src/Sql/Database.ts"
import { runProgram } from "./support/Cleanup.ts"
import { numberFromEnv } from "./support/Env.ts"
import { postgresCpuBetween, postgresSnapshot } from "./support/ProcessCpu.ts"

const LINKS = numberFromEnv("BENCH_LINKS", 100)
const VISITS = numberFromEnv("BENCH_VISITS", 50_000)
const CONCURRENCY = numberFromEnv("BENCH_CONCURRENCY", 50)
const RATE = numberFromEnv("BENCH_RATE", 0)
const PAUSE_SECONDS = numberFromEnv("BENCH_PAUSE_SECONDS", 2)
const UNREACHED_LIMIT = 1_000_000_000_000

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

interface Phase {
  readonly takes: number
  readonly seconds: number
  readonly allowed: number
  /** How long each take that was not answered at once (from a lease) waited, ms. */
  readonly waited: ReadonlyArray<number>
}

const WAITED = Symbol("waited")

/** `takes` takes spread over the links in turn, at RATE or as fast as CONCURRENCY goes. */
const phase = async (limits: ClickLimitsService, takes: number): Promise<Phase> => {
  const started = performance.now()
  const waited: Array<number> = []
  let next = 0
  let allowed = 0
  const worker = async () => {
    while (next < takes) {
      const n = next++
      if (RATE > 0) {
        const wait = started + (n * 1000) / RATE - performance.now()
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      }
      const asked = performance.now()
      const turn = limits.take(n % LINKS, UNREACHED_LIMIT)
      // A take answered from a lease is settled already: it wins the race against a settled marker.
      let got = await Promise.race([turn, Promise.resolve(WAITED)])
      if (got === WAITED) {
        got = await turn
        waited.push(performance.now() - asked)
      }
      if (got !== "exhausted") allowed += 1
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  return { takes, seconds: (performance.now() - started) / 1000, allowed, waited }
}

const waitsLine = ({ takes, waited }: Phase) => {
  const sorted = [...waited].sort((a, b) => a - b)
  const at = (q: number) => (sorted.length === 0 ? "-" : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2))
  return `${waited.length} of ${takes} takes (${(waited.length / takes).toFixed(4)} a take) waited for a statement; waited ms p50 ${at(0.5)}, p99 ${at(0.99)}, max ${at(1)}`
}

runProgram("bench:click-limits", async (cleanup) => {
  const serverUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL
  if (!serverUrl) throw new Error("set BENCH_DATABASE_URL to a PostgreSQL server")
  const database = `links_limits_bench_${process.pid}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  cleanup.defer("drop the database", async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await admin.end()
  })
  const url = withDatabase(serverUrl, database)
  const setup = new pg.Client({ connectionString: url })
  await setup.connect()
  // The tables of sql/0017, 0019 and 0022 without the reference to links: an UPDATE that leaves link_id alone checks no key.
  await setup.query(
    "CREATE TABLE link_limits (link_id bigint PRIMARY KEY, used bigint NOT NULL, granted bigint NOT NULL DEFAULT 0, leased bigint NOT NULL DEFAULT 0, lent bigint NOT NULL DEFAULT 0)"
  )
  await setup.query(
    "CREATE TABLE link_limit_leases (link_id bigint NOT NULL REFERENCES link_limits (link_id) ON DELETE CASCADE, instance uuid NOT NULL, slots bigint NOT NULL, expires_at timestamptz NOT NULL, PRIMARY KEY (link_id, instance))"
  )
  const pool = new pg.Pool({ connectionString: url, max: 10, application_name: "links-limits-bench" })
  // Connections are ended by the DROP DATABASE at the end.
  pool.on("error", () => undefined)
  cleanup.defer("close the pool", () => pool.end())
  let statements = 0
  const query = pool.query.bind(pool)
  pool.query = ((...args: Parameters<typeof query>) => {
    statements += 1
    return query(...args)
  }) as typeof pool.query
  const deps = Layer.succeed(DatabasePool, {
    pool,
    shared: false,
    connection: { connectionString: url, connectionTimeoutMillis: 5000, threadConnections: 1, copyFromStdin: true },
    notificationListeners: new Set<(message: pg.Notification) => void>()
  })
  // The counter's scope stays open until the end: closing it gives its leases back.
  const scope = await Effect.runPromise(Scope.make())
  cleanup.defer("stop the counter", () => Effect.runPromise(Scope.close(scope, Exit.void)))
  const limits = await Effect.runPromise(
    Effect.map(Layer.buildWithScope(Layer.provide(ClickLimits.layerDatabase, deps), scope), Context.get(ClickLimits))
  )

  // Every link's row made, and every statement prepared, before the measured takes.
  await Promise.all(Array.from({ length: LINKS * 5 }, (_, i) => limits.take(i % LINKS, UNREACHED_LIMIT)))
  await setup.query("CHECKPOINT")
  const walOf = async () => (await setup.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn")).rows[0]!.lsn
  const walBytes = async (from: string, to: string) =>
    Number((await setup.query<{ bytes: string }>("SELECT pg_wal_lsn_diff($1, $2)::text AS bytes", [to, from])).rows[0]!.bytes)

  statements = 0
  const walBefore = await walOf()
  const before = await postgresSnapshot(database)
  const main = await phase(limits, VISITS)
  const after = await postgresSnapshot(database)
  const wal = await walBytes(walBefore, await walOf())
  const measuredStatements = statements
  // The links left alone longer than the counter's idle time, then visited again at the same pace.
  await new Promise((resolve) => setTimeout(resolve, PAUSE_SECONDS * 1000))
  const resumed = PAUSE_SECONDS > 0 ? await phase(limits, LINKS * 20) : undefined
  await setup.end()
  const cpu = postgresCpuBetween(before, after)
  const micros = (s: number | undefined) => (s === undefined ? "?" : ((s * 1e6) / VISITS).toFixed(2))
  process.stdout.write(
    [
      `${VISITS} takes over ${LINKS} links, ${CONCURRENCY} in flight${RATE > 0 ? `, ${RATE}/s` : ""}: ${(VISITS / main.seconds).toFixed(0)} takes/s, ${main.allowed} allowed`,
      `counter statements: ${measuredStatements} (${(VISITS / measuredStatements).toFixed(1)} takes each)`,
      `waits: ${waitsLine(main)}`,
      ...(resumed === undefined ? [] : [`after ${PAUSE_SECONDS} s without visits, ${resumed.takes} takes at the same pace: waits ${waitsLine(resumed)}`]),
      `PostgreSQL CPU per take: bench database backends ${micros(cpu?.byRole.get("bench database"))} µs, ` +
        `background ${micros(cpu?.byRole.get("background"))} µs, whole server ${micros(cpu?.seconds)} µs ` +
        `(other backends ${micros(cpu?.byRole.get("other backends"))} µs)`,
      `WAL per take: ${(wal / VISITS).toFixed(0)} B`
    ].join("\n") + "\n"
  )
  return 0
})
