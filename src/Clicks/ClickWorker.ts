/**
 * The click writer thread (started by `ClickThread.ts`): enrichment, batch sums, the PostgreSQL
 * writer, spill files and replay, with a pool of its own, away from the thread that answers redirects.
 */
import { Deferred, Effect, Layer, Logger, LogLevel, Runtime } from "effect"
import { setPriority } from "node:os"
import { parentPort, workerData } from "node:worker_threads"
import { JsonLoggerLive } from "../Platform/JsonLogger.ts"
import { watchLoopDelay } from "../Platform/LoopDelay.ts"
import { watchThreadTime } from "../Platform/ThreadTime.ts"
import { threadClientLayer } from "../Sql/Database.ts"
import { ClickRepo } from "./ClickRepo.ts"
import type { ClickWorkerSettings, FromWorker, ToWorker, WorkerReport } from "./ClickThread.ts"
import { makeClickWriter } from "./ClickWriter.ts"
import { GeoIp } from "./GeoIp.ts"

const LEVELS: ReadonlyArray<LogLevel.Literal> = ["All", "Fatal", "Error", "Warning", "Info", "Debug", "Trace", "None"]

const run = (port: NonNullable<typeof parentPort>, settings: ClickWorkerSettings) =>
  Effect.gen(function* () {
    const send = (message: FromWorker) => port.postMessage(message)
    const loop = watchLoopDelay()
    const time = watchThreadTime()
    let report: Omit<WorkerReport, "loop" | "time"> = { _tag: "Report", settled: -1, written: 0, spilled: 0, replayed: 0, writeSeconds: [] }
    const sendReport = () => {
      send({ ...report, loop: loop.take(), time: time.take() })
      report = { _tag: "Report", settled: report.settled, written: 0, spilled: 0, replayed: 0, writeSeconds: [] }
    }
    // Added before the writer, so it runs after the writer's last flush: the last report tells all.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        sendReport()
        loop.stop()
      })
    )
    const writer = yield* makeClickWriter(
      { flushInterval: settings.flushIntervalMs, batchSize: settings.batchSize, writeTimeout: settings.writeTimeoutMs },
      settings.ipKey,
      settings.spillDir,
      {
        written: (clicks, seconds) => {
          report = { ...report, written: report.written + clicks, writeSeconds: [...report.writeSeconds, seconds] }
        },
        spilled: (clicks) => {
          report = { ...report, spilled: report.spilled + clicks }
        },
        replayed: (clicks) => {
          report = { ...report, replayed: report.replayed + clicks }
        },
        settled: (seq) => {
          report = { ...report, settled: seq }
        }
      }
    )
    const timer = setInterval(sendReport, 1000)
    yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(timer)))
    const stop = yield* Deferred.make<void>()
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    port.on("message", (message: ToWorker) => {
      switch (message._tag) {
        case "Clicks":
          return writer.add(message.batch)
        case "Flush":
          return void runFork(
            writer.flush.pipe(
              Effect.andThen(() => {
                sendReport()
                send({ _tag: "Flushed", id: message.id })
              })
            )
          )
        case "Stop":
          return Deferred.unsafeDone(stop, Effect.void)
      }
    })
    send({ _tag: "Ready" })
    yield* Deferred.await(stop)
  }).pipe(Effect.annotateLogs("thread", "clicks"))

if (parentPort !== null) {
  // On Linux the nice value belongs to the thread: when the cores are busy, the redirect thread
  // answers before clicks are enriched and written (they wait in memory, bounded by the backlog limit).
  try {
    setPriority(0, 10)
  } catch {
    // Not allowed here: the writer runs at the process's priority.
  }
  const port = parentPort
  const settings: ClickWorkerSettings = workerData
  const level = LEVELS.find((literal) => literal === settings.logLevel) ?? "Info"
  const services = Layer.mergeAll(ClickRepo.Default, GeoIp.layer).pipe(
    Layer.provide(threadClientLayer(settings.connection, "link-shortener clicks"))
  )
  Effect.runFork(
    Effect.scoped(run(port, settings)).pipe(
      // The writer's finalizer has written (or spilled) everything: the last report says so.
      Effect.provide(services),
      Effect.provide(Layer.merge(JsonLoggerLive, Logger.minimumLogLevel(LogLevel.fromLiteral(level)))),
      Effect.catchAllCause((cause) => Effect.sync(() => port.postMessage({ _tag: "Failed", reason: String(cause) } satisfies FromWorker)))
    )
  ).addObserver(() => port.close())
}
