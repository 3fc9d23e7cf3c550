import { Context, Duration, Effect, Exit, Fiber, Layer, Metric, Option, Schedule } from "effect"
import { createHmac, randomUUID } from "node:crypto"
import { join } from "node:path"
import { AppConfig } from "../Config.ts"
import { classifyUserAgent, MAX_REFERER, referrerHost, truncateUserAgent } from "./ClickSource.ts"
import { ClickBatch } from "./ClickBatch.ts"
import { ClickRepo, type ClickRow, type LinkClicks } from "./ClickRepo.ts"
import { ClickNotifier } from "./ClickNotifier.ts"
import { clickSpill } from "./ClickSpill.ts"
import { GeoIp, type GeoLocation } from "./GeoIp.ts"
import { clickBufferDepth, clickFlushSeconds, clicksReplayed, clicksSpilled, clicksWritten } from "../Platform/Metrics.ts"
import { TokenSecret } from "../Auth/TokenStore.ts"

/** A click as the redirect handler sees it; enriched later, off the response path. */
export interface RawClick {
  /** Unix milliseconds. */
  readonly at: number
  readonly linkId: number
  readonly domainId: number
  readonly ip: string
  readonly userAgent: string | undefined
  readonly referer: string | undefined
  readonly qr: boolean
}

export interface ClickLogOptions {
  readonly flushInterval: Duration.DurationInput
  /** Most clicks written in one transaction. */
  readonly batchSize: number
  /** How long one batch may take before its clicks go to the spill file instead. */
  readonly writeTimeout: Duration.DurationInput
  readonly notifyInterval: Duration.DurationInput
}

export const clickLogDefaults: ClickLogOptions = {
  flushInterval: "1 second",
  // Large batches fold many clicks of one link and day into one rollup row each.
  batchSize: 50_000,
  writeTimeout: "5 seconds",
  notifyInterval: "5 seconds"
}

const ENRICH_SLICE = 200
/** Clicks per statement when spill files are replayed (each skips the clicks already written). */
const REPLAY_ROWS = 5000

/** A memo of `compute` holding at most `limit` keys (all forgotten at once when full). */
const boundedMemo = <A>(limit: number, compute: (key: string) => A) => {
  const known = new Map<string, A>()
  return (key: string): A => {
    let value = known.get(key)
    if (value === undefined) {
      if (known.size >= limit) known.clear()
      value = compute(key)
      known.set(key, value)
    }
    return value
  }
}

/**
 * `effect`'s outcome, or a failure once `timeout` has passed: the flush is uninterruptible, so that
 * clicks taken from the queue are written or spilled, and only this timeout may give a write up (a
 * partitioned database never answers); a shutdown waits for it. A write given up goes on in the
 * background until interrupted there, and a commit it makes after all is skipped at replay.
 */
export const giveUpAfter = <A, E>(timeout: Duration.DurationInput, effect: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkDaemon(Effect.interruptible(effect))
    const exit = yield* Effect.async<Option.Option<Exit.Exit<A, E>>>((resume) => {
      const timer = setTimeout(() => resume(Effect.succeedNone), Duration.toMillis(timeout))
      fiber.addObserver((exit) => {
        clearTimeout(timer)
        resume(Effect.succeedSome(exit))
      })
    })
    if (Option.isNone(exit)) {
      yield* Fiber.interruptFork(fiber)
      return yield* Effect.fail("timed out" as const)
    }
    return yield* exit.value
  })

// Unlike Effect.yieldNow, which may continue in a microtask, this lets pending I/O run first.
const letIoIn = Effect.async<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})

/**
 * Clicks, recorded without waiting: `enqueue` only appends to memory. Every second the writer takes
 * everything queued and writes it in batches; a batch the database refuses goes at once to an
 * append-only spill file in `DATA_DIR/clicks` (so a crash loses at most one interval of clicks), and
 * so does every later batch until the spill files are replayed, which is tried at each flush; spill
 * files left by an earlier process are replayed at the next start. Memory thus holds at most the
 * clicks of one interval plus one write timeout. Ids are
 * made before the first write, so a batch written twice counts once. Closing the layer writes what
 * is left.
 */
export class ClickLog extends Context.Tag("ClickLog")<
  ClickLog,
  {
    readonly enqueue: (click: RawClick) => void
    /** Writes (or spills) everything queued so far, then replays spill files if the database answers. */
    readonly flush: Effect.Effect<void>
  }
>() {
  static readonly layer = (options: ClickLogOptions = clickLogDefaults) =>
    Layer.scoped(
      ClickLog,
      Effect.gen(function* () {
        const config = yield* AppConfig
        const repo = yield* ClickRepo
        const geo = yield* GeoIp
        const notifier = yield* ClickNotifier
        const { key } = yield* TokenSecret
        const ipKey = createHmac("sha256", key).update("click ip hash").digest()
        const spill = clickSpill(join(config.dataDir, "clicks"))
        let queue: Array<RawClick> = []

        // Parsing a user agent costs ~50 µs and the same few agents make most clicks; the same holds
        // for referrers, and for client addresses within a few seconds (hash and place).
        const deviceOf = boundedMemo(10_000, classifyUserAgent)
        // Keyed by the part referrerHost reads, so a long Referer cannot make an entry large.
        const referrerOf = boundedMemo(10_000, referrerHost)
        const clientOf = boundedMemo(50_000, (ip): { readonly hash: string; readonly place: GeoLocation } => ({
          hash: createHmac("sha256", ipKey).update(ip).digest("hex").slice(0, 32),
          place: geo.lookup(ip)
        }))

        // Clicks come many to a millisecond: its id prefix and ISO form are made once.
        let lastAt = Number.NaN
        let idPrefix = ""
        let isoAt = ""
        const timeOf = (at: number) => {
          if (at === lastAt) return
          lastAt = at
          const time = at.toString(16).padStart(12, "0")
          idPrefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`
          isoAt = new Date(at).toISOString()
        }

        // The id is made here, before the first attempt to write: a retry or a replay reuses it. Its
        // first 48 bits are the time in milliseconds (the layout of UUID version 7), so that the
        // primary key index of clicks grows at its end instead of everywhere.
        const enrich = (click: RawClick): ClickRow => {
          const userAgent = truncateUserAgent(click.userAgent)
          const { device, bot } = deviceOf(userAgent)
          const { hash, place } = clientOf(click.ip)
          timeOf(click.at)
          return {
            id: `${idPrefix}${randomUUID().slice(15)}`,
            at: isoAt,
            link_id: click.linkId,
            domain_id: click.domainId,
            ip_hash: hash,
            country: place.country,
            region: place.region,
            city: place.city,
            device,
            referrer: click.referer === undefined ? "direct" : referrerOf(click.referer.slice(0, MAX_REFERER)),
            user_agent: userAgent,
            qr: click.qr,
            bot
          }
        }

        // New clicks take the cheap path (`repo.insertFresh`); a replay, which may repeat a batch
        // whose commit was not confirmed, the one that skips clicks already written (`repo.insert`).
        const writeBatch = (write: Effect.Effect<ReadonlyArray<LinkClicks>, unknown>, clicks: number) =>
          giveUpAfter(options.writeTimeout, write).pipe(
            Effect.tap((counts) => notify(counts)),
            Effect.tap(() => Metric.incrementBy(clicksWritten, clicks))
          )

        const notify = (counts: ReadonlyArray<LinkClicks>) =>
          notifier.record(counts).pipe(
            Effect.catchAll((error) => Effect.logWarning("click e-mail counts not recorded", error))
          )

        const spillRows = (rows: ReadonlyArray<ClickRow>) =>
          Effect.zipRight(
            Effect.promise(() => spill.append(rows)),
            Metric.incrementBy(clicksSpilled, rows.length)
          )

        // After a failed write, batches go straight to the spill file (durable at once) until a
        // replay shows the database answers again.
        let databaseDown = false

        const rowsOf = (batches: ReadonlyArray<ClickBatch>) => batches.flatMap((batch) => batch.rows)

        /** Writes the batches in turn; what cannot be written is spilled. */
        const write = (batches: ReadonlyArray<ClickBatch>) =>
          Effect.gen(function* () {
            if (databaseDown) {
              yield* spillRows(rowsOf(batches))
              return true
            }
            for (const [n, batch] of batches.entries()) {
              const failed = yield* writeBatch(repo.insertFresh(batch), batch.size).pipe(
                Metric.trackDurationWith(clickFlushSeconds, Duration.toSeconds),
                Effect.as(false),
                // A connection lost inside the transaction makes its rollback fail too, which
                // @effect/sql reports as a defect: every cause means the same here.
                Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("database unavailable: spilling clicks", cause), true))
              )
              if (failed) {
                databaseDown = true
                yield* spillRows(rowsOf(batches.slice(n)))
                return false
              }
            }
            return true
          })

        /** Replays spill files until one fails; each file is removed once all of it is written. */
        const replay = Effect.gen(function* () {
          for (const file of yield* Effect.promise(spill.replayable)) {
            const lines = spill.read(file, REPLAY_ROWS)
            let replayed = 0
            while (true) {
              const next = yield* Effect.promise(() => lines.next())
              if (next.done === true) break
              const ok = yield* writeBatch(repo.insert(next.value), next.value.length).pipe(
                Effect.as(true),
                Effect.catchAllCause(() => Effect.succeed(false))
              )
              if (!ok) {
                databaseDown = true
                yield* Effect.promise(async () => lines.return(undefined))
                return
              }
              databaseDown = false
              replayed += next.value.length
              yield* Metric.incrementBy(clicksReplayed, next.value.length)
            }
            yield* Effect.promise(() => spill.remove(file))
            if (replayed > 0) yield* Effect.logInfo(`replayed ${replayed} spilled clicks from ${file}`)
          }
          databaseDown = false
        })

        const flush = Effect.gen(function* () {
          const taken = queue
          queue = []
          yield* Metric.set(clickBufferDepth, taken.length)
          // Enriching, summing and serializing run on the thread that answers redirects: in slices,
          // letting requests through.
          const batches: Array<ClickBatch> = []
          let batch = new ClickBatch()
          for (let start = 0; start < taken.length; start += ENRICH_SLICE) {
            if (batch.size >= options.batchSize) {
              batches.push(batch)
              batch = new ClickBatch()
            }
            batch.add(taken.slice(start, start + ENRICH_SLICE).map(enrich))
            yield* letIoIn
          }
          if (batch.size > 0) batches.push(batch)
          if (yield* write(batches)) yield* replay
        }).pipe(Effect.uninterruptible)

        // Released after the loop below has been interrupted (it finishes the flush it is in).
        yield* Effect.addFinalizer(() => flush)
        // The first run, at once, replays what an earlier process left in spill files.
        yield* flush.pipe(
          // Only a spill file that cannot be written gets here: those clicks are lost, the loop goes on.
          Effect.catchAllCause((cause) => Effect.logError("clicks could not be written or spilled", cause)),
          Effect.repeat(Schedule.fixed(options.flushInterval)),
          Effect.forkScoped
        )
        yield* notifier.sendDue.pipe(
          Effect.catchAllCause((cause) => Effect.logWarning("click e-mails not sent", cause)),
          Effect.repeat(Schedule.spaced(options.notifyInterval)),
          Effect.forkScoped
        )

        return {
          enqueue: (click) => {
            queue.push(click)
          },
          flush
        }
      })
    )
}
