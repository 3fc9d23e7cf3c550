import { Deferred, Effect, type Scope } from "effect"
import { Worker } from "node:worker_threads"
import type { Connection } from "../Sql/Database.ts"
import type { LoopDelay } from "../Platform/LoopDelay.ts"
import { startWorker } from "../Platform/WorkerScript.ts"
import type { ThreadTime } from "../Platform/ThreadTime.ts"
import type { HandedClicks } from "./ClickHandover.ts"
import { HeldBytes } from "./HeldBytes.ts"

/** What the click writer thread is started with (`workerData`): plain data only. */
export interface ClickWorkerSettings {
  readonly connection: Connection
  readonly spillDir: string
  readonly ipKey: Uint8Array
  /** A `LogLevel` literal ("Info", "Warning", ...). */
  readonly logLevel: string
  readonly flushIntervalMs: number
  readonly batchSize: number
  readonly writeTimeoutMs: number
}

/** From the redirect thread to the click writer thread. */
export type ToWorker =
  | { readonly _tag: "Clicks"; readonly batch: HandedClicks }
  | { readonly _tag: "Flush"; readonly id: number }
  | { readonly _tag: "Stop" }

/** What the writer did since its previous report. */
export interface WorkerReport {
  readonly _tag: "Report"
  /** Every batch up to this seq is written or spilled (-1: none yet). */
  readonly settled: number
  readonly written: number
  readonly spilled: number
  readonly replayed: number
  /** Seconds each write took. */
  readonly writeSeconds: ReadonlyArray<number>
  /** The writer thread's event-loop delay since the previous report. */
  readonly loop: LoopDelay
  /** The writer thread's CPU time and run-queue wait since the previous report (undefined: not on Linux). */
  readonly time: ThreadTime | undefined
}

/** From the click writer thread to the redirect thread. */
export type FromWorker =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Failed"; readonly reason: string }
  | WorkerReport
  | { readonly _tag: "Flushed"; readonly id: number }

/** A worker that dies sooner than this after its start was not healthy: the next start waits longer. */
const HEALTHY_MS = 10_000
const MAX_BACKOFF_MS = 30_000
/** How long one stop may take (a write times out after 5 s, then its batch is spilled). */
const STOP_TIMEOUT_MS = 60_000
const STOP_ATTEMPTS = 3

/** The writer's thread: built, through a fresh build, or from the sources (`Platform/WorkerScript.ts`). */
const newWorker = (settings: ClickWorkerSettings) => startWorker(import.meta.url, "ClickWorker", settings)

export interface ClickThreadHooks {
  readonly report: (report: WorkerReport) => void
  readonly restarted: (code: number, handedAgain: number) => void
  readonly lost: (clicks: number) => void
}

export interface ClickThread {
  /** Hands a batch to the writer thread; it is kept here until the writer reports it written or spilled. */
  readonly hand: (batch: HandedClicks) => void
  /** Clicks handed over and not yet written or spilled. */
  readonly held: () => number
  /** Resolves when the writer has written (or spilled) everything handed over so far. */
  readonly flush: Effect.Effect<void>
}

const isFromWorker = (message: unknown): message is FromWorker =>
  typeof message === "object" && message !== null && "_tag" in message && typeof message._tag === "string"

/**
 * The click writer on a thread of its own (`ClickWorker.ts`). Batches stay here until the writer
 * reports them written or spilled; a writer that dies is started again (sooner the first times, up
 * to 30 s apart) and given every unreported batch again, marked as possibly written, so that its
 * clicks are stored once. Closing the scope stops the writer, which writes (or spills) everything.
 */
export const startClickThread = (
  settings: ClickWorkerSettings,
  hooks: ClickThreadHooks
): Effect.Effect<ClickThread, Error, Scope.Scope> =>
  Effect.gen(function* () {
    /** Handed batches not yet reported written or spilled, their bytes in `heldBytes`. */
    let unsettled: Array<HandedClicks> = []
    const heldBytes = new HeldBytes()
    let held = 0
    const flushes = new Map<number, () => void>()
    let nextFlush = 0
    let worker: Worker | undefined
    let everReady = false
    let startedAt = 0
    let quickDeaths = 0
    let restartTimer: NodeJS.Timeout | undefined
    // While the scope closes: the stops tried so far, and what to call once the writer has ended.
    let closing: { attempts: number; gaveUp: boolean; ended: () => void } | undefined

    const settle = (seq: number) => {
      let n = 0
      while (n < unsettled.length && unsettled[n]!.seq <= seq) {
        const batch = unsettled[n++]!
        held -= batch.count
        heldBytes.release(batch.bytes)
      }
      if (n > 0) unsettled = unsettled.slice(n)
    }

    const post = (message: ToWorker) => worker?.postMessage(message)

    const onExit = (code: number) => {
      worker = undefined
      if (closing !== undefined) {
        if (unsettled.length === 0 || closing.gaveUp || closing.attempts >= STOP_ATTEMPTS) return closing.ended()
        closing.attempts++
        hooks.restarted(code, held)
        return spawn(() => undefined)
      }
      quickDeaths = Date.now() - startedAt < HEALTHY_MS ? quickDeaths + 1 : 0
      const delay = quickDeaths === 0 ? 0 : Math.min(MAX_BACKOFF_MS, 100 * 2 ** quickDeaths)
      restartTimer = setTimeout(() => {
        restartTimer = undefined
        hooks.restarted(code, held)
        spawn(() => undefined)
      }, delay)
    }

    const spawn = (onStart: (error?: Error) => void) => {
      const started = newWorker(settings)
      worker = started
      startedAt = Date.now()
      let ready = false
      started.on("message", (message: unknown) => {
        if (!isFromWorker(message)) return
        switch (message._tag) {
          case "Ready":
            ready = everReady = true
            onStart()
            return
          case "Failed":
            if (!ready) onStart(new Error(`the click writer thread did not start: ${message.reason}`))
            return
          case "Report":
            settle(message.settled)
            hooks.report(message)
            return
          case "Flushed": {
            const done = flushes.get(message.id)
            flushes.delete(message.id)
            done?.()
            return
          }
        }
      })
      // An uncaught error ends the thread: "exit" follows, and handles it.
      let uncaught: unknown
      started.on("error", (error) => {
        uncaught = error
      })
      started.on("exit", (code) => {
        if (worker !== started) return
        if (!ready) onStart(new Error(`the click writer thread exited with code ${code} before it started: ${String(uncaught)}`))
        // The first start failed: the layer fails with it, nothing to restart.
        if (!everReady) return
        onExit(code)
      })
      // Messages wait in the port until the new thread listens. A held batch's bytes are a view of a
      // slab: posted as they are, the whole slab would be copied.
      for (const batch of unsettled) {
        started.postMessage({ _tag: "Clicks", batch: { ...batch, again: true, bytes: batch.bytes.slice() } } satisfies ToWorker)
      }
      for (const id of flushes.keys()) started.postMessage({ _tag: "Flush", id } satisfies ToWorker)
      if (closing !== undefined) started.postMessage({ _tag: "Stop" } satisfies ToWorker)
    }

    yield* Effect.async<void, Error>((resume) =>
      spawn((error) => resume(error === undefined ? Effect.void : Effect.fail(error)))
    )

    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        const ended = yield* Deferred.make<void>()
        const state = { attempts: 1, gaveUp: false, ended: () => Deferred.unsafeDone(ended, Effect.void) }
        closing = state
        if (restartTimer !== undefined) {
          clearTimeout(restartTimer)
          restartTimer = undefined
          spawn(() => undefined)
        } else if (worker === undefined) spawn(() => undefined)
        else post({ _tag: "Stop" })
        const inTime = yield* Deferred.await(ended).pipe(Effect.timeoutOption(STOP_TIMEOUT_MS * STOP_ATTEMPTS))
        if (inTime._tag === "None") {
          state.gaveUp = true
          const hung = worker
          yield* Effect.promise(() => hung?.terminate() ?? Promise.resolve(0))
        }
        if (held > 0) hooks.lost(held)
      })
    )

    return {
      hand: (batch) => {
        unsettled.push({ ...batch, bytes: heldBytes.hold(batch.bytes) })
        held += batch.count
        post({ _tag: "Clicks", batch })
      },
      held: () => held,
      flush: Effect.async<void>((resume) => {
        const id = nextFlush++
        flushes.set(id, () => resume(Effect.void))
        post({ _tag: "Flush", id })
      })
    }
  })
