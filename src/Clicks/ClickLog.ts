import { Context, Duration, Effect, FiberRef, Layer, Runtime, Schedule } from "effect"
import { createHmac } from "node:crypto"
import { join } from "node:path"
import { AppConfig } from "../Config.ts"
import { TokenSecret } from "../Auth/TokenStore.ts"
import { DatabasePool } from "../Sql/Database.ts"
import { watchLoopDelay } from "../Platform/LoopDelay.ts"
import { watchThreadTime } from "../Platform/ThreadTime.ts"
import {
  clickBufferDepth,
  clickFlushSeconds,
  clicksDropped,
  clicksHandedOver,
  clicksReplayed,
  clicksSpilled,
  clicksWritten,
  clickWorkerRestarts,
  recordLoopDelay,
  recordThreadTime
} from "../Platform/Metrics.ts"
import { ClickEncoder, MAX_HANDED, type RawClick } from "./ClickHandover.ts"
import { ClickNotifier } from "./ClickNotifier.ts"
import { databaseOutage, retryBackoff } from "../Platform/Outage.ts"
import { startClickThread } from "./ClickThread.ts"
import { clickWriterDefaults, type ClickWriterOptions } from "./ClickWriter.ts"

export type { RawClick } from "./ClickHandover.ts"

export interface ClickLogOptions extends ClickWriterOptions {
  readonly notifyInterval: Duration.DurationInput
  /** How often the redirect thread hands its clicks to the writer thread (also sooner, per `handOverAt` clicks). */
  readonly handOverInterval: Duration.DurationInput
  readonly handOverAt: number
  /** Clicks handed over and not yet written or spilled beyond which new clicks are dropped (and counted). */
  readonly backlogLimit: number
}

export const clickLogDefaults: ClickLogOptions = {
  ...clickWriterDefaults,
  notifyInterval: "5 seconds",
  handOverInterval: "20 millis",
  handOverAt: 2000,
  // About 20 s of 25,000 clicks a second, some 150 MB.
  backlogLimit: 500_000
}

const NO_TAGS: [] = []
/** At most one warning about dropped clicks per this many milliseconds. */
const DROP_WARNING_MS = 10_000

/**
 * Clicks, recorded without waiting: `enqueue` only appends to a byte buffer, and every 20 ms (or per 2,000
 * clicks) the redirect thread hands what it has to the click writer thread (`ClickThread.ts`), which
 * enriches and writes it. Closing the layer writes (or spills) everything handed over.
 */
export class ClickLog extends Context.Tag("ClickLog")<
  ClickLog,
  {
    readonly enqueue: (click: RawClick) => void
    /** Hands over everything queued and waits until the writer has written (or spilled) it and replayed spill files. */
    readonly flush: Effect.Effect<void>
  }
>() {
  static readonly layerWith = (options: ClickLogOptions) =>
    Layer.scoped(
      ClickLog,
      Effect.gen(function* () {
        const config = yield* AppConfig
        const { connection } = yield* DatabasePool
        const notifier = yield* ClickNotifier
        const { dataKey } = yield* TokenSecret
        const logLevel = yield* FiberRef.get(FiberRef.currentMinimumLogLevel)
        const runFork = Runtime.runFork(yield* Effect.runtime<never>())
        const warn = (message: string) => runFork(Effect.logWarning(message))
        const thread = yield* startClickThread(
          {
            connection,
            spillDir: join(config.dataDir, "clicks"),
            ipKey: createHmac("sha256", dataKey).update("click ip hash").digest(),
            logLevel: logLevel._tag,
            flushIntervalMs: Duration.toMillis(options.flushInterval),
            batchSize: options.batchSize,
            writeTimeoutMs: Duration.toMillis(options.writeTimeout)
          },
          {
            report: (report) => {
              clicksWritten.unsafeUpdate(report.written, NO_TAGS)
              clicksSpilled.unsafeUpdate(report.spilled, NO_TAGS)
              clicksReplayed.unsafeUpdate(report.replayed, NO_TAGS)
              for (const seconds of report.writeSeconds) clickFlushSeconds.unsafeUpdate(seconds, NO_TAGS)
              recordLoopDelay("clicks", report.loop)
              recordThreadTime("clicks", report.time)
            },
            restarted: (code, handedAgain) => {
              clickWorkerRestarts.unsafeUpdate(1, NO_TAGS)
              warn(`the click writer thread stopped (exit code ${code}): started again with the ${handedAgain} clicks it had not written`)
            },
            lost: (clicks) => warn(`the click writer thread could not be stopped cleanly: ${clicks} clicks handed to it are lost`)
          }
        ).pipe(Effect.orDie)

        const queue = new ClickEncoder()
        let seq = 0
        let lastDropWarning = 0
        const handAll = () => {
          if (queue.count === 0) return
          const taken = queue.take(seq)
          if (thread.held() >= options.backlogLimit) {
            clicksDropped.unsafeUpdate(taken.count, NO_TAGS)
            if (Date.now() - lastDropWarning >= DROP_WARNING_MS) {
              lastDropWarning = Date.now()
              warn(`clicks dropped: the click writer holds ${thread.held()} clicks not yet written or spilled`)
            }
            return
          }
          seq++
          thread.hand(taken)
          clicksHandedOver.unsafeUpdate(taken.count, NO_TAGS)
        }
        const handAt = Math.min(options.handOverAt, MAX_HANDED)

        const redirectLoop = watchLoopDelay()
        const redirectTime = watchThreadTime()
        const timers = [
          setInterval(handAll, Duration.toMillis(options.handOverInterval)),
          setInterval(() => {
            recordLoopDelay("redirect", redirectLoop.take())
            recordThreadTime("redirect", redirectTime.take())
            clickBufferDepth.unsafeUpdate(queue.count + thread.held(), NO_TAGS)
          }, 1000)
        ]
        // Runs before the thread's own finalizer (added earlier), which stops the writer.
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            for (const timer of timers) clearInterval(timer)
            redirectLoop.stop()
            handAll()
          })
        )
        // The documented counters exist from the start, at zero.
        for (const counter of [clicksHandedOver, clicksDropped, clickWorkerRestarts, clicksWritten, clicksSpilled, clicksReplayed]) {
          counter.unsafeUpdate(0, NO_TAGS)
        }
        recordLoopDelay("redirect", { p50: 0, p99: 0, max: 0 })
        recordThreadTime("redirect", redirectTime.take())
        clickBufferDepth.unsafeUpdate(0, NO_TAGS)

        // While the database fails, the next attempt waits longer each time (retryBackoff).
        yield* notifier.sendDue.pipe(
          Effect.sandbox,
          Effect.tapBoth({ onFailure: databaseOutage.failed, onSuccess: () => databaseOutage.succeeded }),
          Effect.retry(retryBackoff),
          Effect.repeat(Schedule.spaced(options.notifyInterval)),
          Effect.forkScoped
        )

        return {
          enqueue: (click) => {
            queue.add(click)
            if (queue.count >= handAt) handAll()
          },
          flush: Effect.suspend(() => {
            handAll()
            return thread.flush
          })
        }
      })
    )
  /** With the options the service runs with. */
  static readonly layer = this.layerWith(clickLogDefaults)
}
