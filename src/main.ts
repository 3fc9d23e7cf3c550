import "./Platform/HeapFlags.ts"
import * as HttpServer from "@effect/platform/HttpServer"
import { Cause, Deferred, Duration, Effect, Exit, Layer, Metric, Option, Redacted } from "effect"
import type { ConfigError } from "effect"
import { join, resolve } from "node:path"
import { BootstrapLive, coreLayer, httpLayer, LoggerLive } from "./App.ts"
import { AppConfig, type AppConfigShape } from "./Config.ts"
import { clickSpill } from "./Clicks/ClickSpill.ts"
import { clicksReplayed, clicksSpilled, clicksWritten } from "./Platform/Metrics.ts"
import { runMarker } from "./Operations/RunMarker.ts"
import { privateDataDir } from "./Platform/DataDir.ts"
import { packageVersion } from "./Platform/ProcessMetrics.ts"
import { Shutdown, ShutdownState } from "./Platform/Shutdown.ts"
import { TracingLive } from "./Platform/Tracing.ts"
import { DatabaseLive } from "./Sql/Database.ts"

const shutdown = new ShutdownState()
// Never removed: whatever signals follow, the process ends only when its layers have closed, which
// is when the queued clicks are written (or spilled).
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => shutdown.request())

// Under `npm start`, an operator may signal npm's process id: killed outright, npm cannot pass the
// stop on, so the service stops by itself when it sees its parent gone.
if (process.env.npm_lifecycle_event !== undefined) {
  const parent = process.ppid
  setInterval(() => {
    if (process.ppid !== parent) shutdown.request()
  }, 1_000).unref()
}

const ServiceLive = httpLayer().pipe(
  Layer.provide(BootstrapLive),
  Layer.provideMerge(Shutdown.layerOf(shutdown)),
  Layer.provideMerge(coreLayer(DatabaseLive)),
  // Built first, closed last: the spans of the stop itself are flushed too.
  Layer.provide(TracingLive)
)

const version = packageVersion()

const databaseOf = (config: AppConfigShape) =>
  Option.match(config.databaseUrl, {
    onNone: () => `embedded PGlite in ${resolve(config.dataDir, "pg")}`,
    onSome: (url) => {
      try {
        const parsed = new URL(Redacted.value(url))
        return `PostgreSQL at ${parsed.host}${parsed.pathname}`
      } catch {
        return "PostgreSQL"
      }
    }
  })

/** What an operator checks first, without a secret. */
const settingsOf = (config: AppConfigShape) => ({
  data_dir: resolve(config.dataDir),
  redis: Option.isSome(config.redisUrl) ? "shared rate limits" : "unset (rate limits per instance)",
  trust_proxy: `${config.trustProxy.size} address(es) or range(s)`,
  rate_limit_per_second: config.rateLimitPerSecond,
  rate_limit_per_token_per_second: config.rateLimitPerTokenPerSecond,
  smtp: Option.isSome(config.smtpUrl) ? "set" : "unset (e-mails to the log)",
  token_secret: Option.isSome(config.tokenSecret) ? "from TOKEN_SECRET" : `from ${join(resolve(config.dataDir), "token-secret")}`,
  log_level: config.logLevel.label,
  db_pool_size: config.dbPoolSize,
  api_deadline_seconds: config.apiDeadlineSeconds,
  shutdown_drain_seconds: config.shutdownDrainSeconds,
  analytics_timeout_seconds: config.analyticsTimeoutSeconds,
  analytics_concurrency_per_account: config.analyticsConcurrencyPerAccount,
  url_check_allow_private: config.urlCheckAllowPrivate,
  traces: Option.match(config.otlpTracesEndpoint, {
    onNone: () => "off (OTEL_EXPORTER_OTLP_ENDPOINT unset)",
    onSome: (url) => `OTLP/HTTP to ${url.replace(/\/\/[^/@]*@/, "//")}, sampler ${config.otelTracesSampler}, redirects ${config.redirectTraceRatio}`
  })
})

const clickCounts = Effect.all({
  written: Metric.value(clicksWritten),
  spilled: Metric.value(clicksSpilled),
  replayed: Metric.value(clicksReplayed)
}).pipe(Effect.map(({ written, spilled, replayed }) => ({ written: written.count, spilled: spilled.count, replayed: replayed.count })))

/** Serves until a stop is requested, then drains for SHUTDOWN_DRAIN_SECONDS or until a second request. */
const serve = (startedAt: number) =>
  Effect.gen(function* () {
    const config = yield* AppConfig
    const address = (yield* HttpServer.HttpServer).address
    yield* Effect.logInfo(`ready in ${((Date.now() - startedAt) / 1000).toFixed(2)} s`).pipe(
      Effect.annotateLogs({
        version,
        listening: address._tag === "TcpAddress" ? `http://${address.hostname}:${address.port}` : address.path,
        database: databaseOf(config),
        settings: settingsOf(config)
      })
    )
    yield* Deferred.await(shutdown.requested)
    const stop = { at: Date.now(), answered: shutdown.answered, clicks: yield* clickCounts }
    const drain = config.shutdownDrainSeconds
    yield* Effect.logInfo(
      `stop requested: draining for ${drain} s (/readyz answers 503, every answer closes its connection); a second signal ends the drain`
    )
    const hurried = yield* Effect.raceFirst(
      Effect.as(Effect.sleep(Duration.seconds(drain)), false),
      Effect.as(Deferred.await(shutdown.hurried), true)
    )
    yield* Effect.logInfo(
      `${hurried ? "drain ended by a second signal" : "drain over"}: closing the listener, finishing in-flight requests, writing queued clicks`
    )
    return stop
  })

const run = Effect.gen(function* () {
  const startedAt = Date.now()
  const config = yield* AppConfig
  yield* privateDataDir(config.dataDir)
  const marker = runMarker(config.dataDir)
  for (const earlier of yield* Effect.promise(marker.claim)) {
    yield* Effect.logWarning(
      `the run of process ${earlier.pid} started at ${earlier.startedAt} did not stop cleanly: clicks it held in memory are lost, those it spilled are replayed now`
    )
  }
  const pending = yield* Effect.promise(clickSpill(join(config.dataDir, "clicks")).pending)
  if (pending > 0) yield* Effect.logInfo(`${pending} spilled clicks left by earlier runs are being replayed`)

  // Timed and counted from the stop's request: the drain, the listener's close and the last clicks.
  const stop = yield* serve(startedAt).pipe(Effect.provide(ServiceLive))
  const after = yield* clickCounts
  yield* Effect.promise(marker.release)
  yield* Effect.logInfo(`stopped in ${((Date.now() - stop.at) / 1000).toFixed(2)} s`).pipe(
    Effect.annotateLogs({
      requests_finished_while_stopping: shutdown.answered - stop.answered,
      clicks_written: after.written - stop.clicks.written,
      clicks_spilled: after.spilled - stop.clicks.spilled,
      clicks_replayed: after.replayed - stop.clicks.replayed
    })
  )
})

const problems = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...problems(error.left), ...problems(error.right)]
    default:
      return [`${error.path.length === 0 ? "(unnamed variable)" : error.path.join(".")}: ${error.message}`]
  }
}

const EXIT_FAILED = 1
const EXIT_CONFIGURATION = 2

// The process stays up while the program runs, even between two pieces of I/O.
const keepAlive = setInterval(() => undefined, 2 ** 30)

const main = run.pipe(
  Effect.as(0),
  Effect.provide(LoggerLive),
  Effect.provide(AppConfig.layer),
  Effect.catchTag("ConfigError", (error) =>
    Effect.sync(() => {
      process.stderr.write(`configuration error: ${problems(error).join("; ")}\n`)
      return EXIT_CONFIGURATION
    })
  ),
  Effect.catchTag("DataDirRefused", (error) =>
    Effect.sync(() => {
      process.stderr.write(`configuration error: ${error.message}\n`)
      return EXIT_CONFIGURATION
    })
  ),
  Effect.catchAllCause((cause) =>
    Effect.sync(() => {
      process.stderr.write(`the service stopped on an error:\n${Cause.pretty(cause)}\n`)
      return EXIT_FAILED
    })
  )
)

Effect.runFork(main).addObserver((exit) => {
  clearInterval(keepAlive)
  process.exit(Exit.isSuccess(exit) ? exit.value : EXIT_FAILED)
})
