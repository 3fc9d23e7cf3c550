import { Duration, Effect, Exit, Fiber, Option, Schedule, type Scope } from "effect"
import { createHmac } from "node:crypto"
import { boundedMemo, classifyUserAgent, headerText, MAX_REFERER, MAX_USER_AGENT, referrerHost, truncateUserAgent } from "./ClickSource.ts"
import { ClickBatch } from "./ClickBatch.ts"
import { clickId, type HandedClicks, type RawClick, unpack } from "./ClickHandover.ts"
import { ClickRepo, type ClickRow, type LinkClicks } from "./ClickRepo.ts"
import { clickSpill } from "./ClickSpill.ts"
import { GeoIp, type GeoLocation } from "./GeoIp.ts"

export interface ClickWriterOptions {
  readonly flushInterval: Duration.DurationInput
  /** Most clicks written in one transaction. */
  readonly batchSize: number
  /** How long one batch may take before its clicks go to the spill file instead. */
  readonly writeTimeout: Duration.DurationInput
}

export const clickWriterDefaults: ClickWriterOptions = {
  flushInterval: "1 second",
  // Large batches fold many clicks of one link and day into one rollup row each.
  batchSize: 50_000,
  writeTimeout: "5 seconds"
}

/** What the writer did, told as it happens: the thread that owns the metrics counts it. */
export interface ClickWriterEvents {
  readonly written: (clicks: number, seconds: number) => void
  readonly spilled: (clicks: number) => void
  readonly replayed: (clicks: number) => void
  /** Every handed batch up to `seq` is written or spilled. */
  readonly settled: (seq: number) => void
}

const ENRICH_SLICE = 200
/** Clicks per statement when spill files are replayed (each skips the clicks already written). */
const REPLAY_ROWS = 5000


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

export interface ClickWriter {
  /** Queues a handed batch for the next flush. */
  readonly add: (batch: HandedClicks) => void
  /** Writes (or spills) everything queued so far, then replays spill files if the database answers. */
  readonly flush: Effect.Effect<void>
}

/**
 * The click writer: every second it takes the handed batches, enriches their clicks (GeoIP, device,
 * bot, referrer host, keyed hash of the address, id) and writes them in batches; a batch the database
 * refuses goes at once to an append-only spill file in `spillDir` (so a crash loses at most one
 * interval of clicks), and so does every later batch until the spill files are replayed, which is
 * tried at each flush; spill files left by an earlier process are replayed at the first flush. Memory
 * thus holds at most the clicks of one interval plus one write timeout. Closing the scope writes what
 * is left. Flushes run one at a time, so `settled` only grows.
 */
export const makeClickWriter = (
  options: ClickWriterOptions,
  ipKey: Uint8Array,
  spillDir: string,
  events: ClickWriterEvents
): Effect.Effect<ClickWriter, never, ClickRepo | GeoIp | Scope.Scope> =>
  Effect.gen(function* () {
    const repo = yield* ClickRepo
    const geo = yield* GeoIp
    const spill = clickSpill(spillDir)
    const lock = yield* Effect.makeSemaphore(1)
    let queue: Array<HandedClicks> = []

    // Parsing a user agent costs ~50 µs and the same few agents make most clicks; the same holds
    // for referrers, and for client addresses within a few seconds (hash and place). Both are
    // keyed by the header as it came, so reading it as UTF-8 is done once per distinct value.
    const agentOf = boundedMemo(10_000, (header) => {
      const userAgent = truncateUserAgent(headerText(header, MAX_USER_AGENT))
      return { userAgent, ...classifyUserAgent(userAgent) }
    })
    // Keyed by the part referrerHost reads, so a long Referer cannot make an entry large.
    const referrerOf = boundedMemo(10_000, (header) => referrerHost(headerText(header, MAX_REFERER)))
    const clientOf = boundedMemo(50_000, (ip): { readonly hash: string; readonly place: GeoLocation } => ({
      hash: createHmac("sha256", ipKey).update(ip).digest("hex").slice(0, 32),
      place: geo.lookup(ip)
    }))

    // Clicks come many to a millisecond: its ISO form is made once.
    let lastAt = Number.NaN
    let isoAt = ""
    const isoOf = (at: number) => {
      if (at !== lastAt) {
        lastAt = at
        isoAt = new Date(at).toISOString()
      }
      return isoAt
    }

    const enrich = (click: RawClick, nonce: string, i: number): ClickRow => {
      const { userAgent, device, bot } = agentOf(click.userAgent ?? "")
      const { hash, place } = clientOf(click.ip)
      const referer = click.referer
      return {
        id: clickId(click.at, nonce, i),
        at: isoOf(click.at),
        link_id: click.linkId,
        domain_id: click.domainId,
        ip_hash: hash,
        country: place.country,
        region: place.region,
        city: place.city,
        device,
        referrer: referer === undefined ? "direct" : referrerOf(referer.slice(0, MAX_REFERER)),
        user_agent: userAgent,
        qr: click.qr,
        destination_id: click.destinationId ?? null,
        bot
      }
    }

    const notify = (counts: ReadonlyArray<LinkClicks>) =>
      repo.recordNotifications(counts).pipe(
        Effect.catchAll((error) => Effect.logWarning("click e-mail counts not recorded", error))
      )

    const timed = <A, E>(write: Effect.Effect<A, E>) =>
      Effect.gen(function* () {
        const started = performance.now()
        const result = yield* write
        return [result, (performance.now() - started) / 1000] as const
      })

    // New clicks take the cheap path (`repo.insertFresh`); a replay or a batch handed over again, which
    // may repeat clicks whose commit was not confirmed, the one that skips clicks already written.
    const writeRows = (write: Effect.Effect<ReadonlyArray<LinkClicks>, unknown>, clicks: number) =>
      timed(giveUpAfter(options.writeTimeout, write)).pipe(
        Effect.tap(([counts]) => notify(counts)),
        Effect.tap(([, seconds]) => Effect.sync(() => events.written(clicks, seconds)))
      )

    const spillRows = (rows: ReadonlyArray<ClickRow>) =>
      Effect.promise(() => spill.append(rows)).pipe(Effect.tap(() => Effect.sync(() => events.spilled(rows.length))))

    // After a failed write, batches go straight to the spill file (durable at once) until a
    // replay shows the database answers again.
    let databaseDown = false

    /** A write whose every failure means the same: the batch must be spilled. */
    const attempt = (write: Effect.Effect<unknown, unknown>) =>
      write.pipe(
        Effect.as(true),
        // A connection lost inside the transaction makes its rollback fail too, which
        // @effect/sql reports as a defect: every cause means the same here.
        Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("database unavailable: spilling clicks", cause), false))
      )

    /** Writes the row groups in turn, each through `write`; what cannot be written is spilled. */
    const writeAll = <A extends { readonly rows: ReadonlyArray<ClickRow> }>(
      groups: ReadonlyArray<A>,
      write: (group: A) => Effect.Effect<unknown, unknown>
    ) =>
      Effect.gen(function* () {
        if (databaseDown) {
          yield* spillRows(groups.flatMap((group) => group.rows))
          return true
        }
        for (const [n, group] of groups.entries()) {
          if (!(yield* attempt(write(group)))) {
            databaseDown = true
            yield* spillRows(groups.slice(n).flatMap((later) => later.rows))
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
          const ok = yield* writeRows(repo.insert(next.value), next.value.length).pipe(
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
          events.replayed(next.value.length)
        }
        yield* Effect.promise(() => spill.remove(file))
        if (replayed > 0) yield* Effect.logInfo(`replayed ${replayed} spilled clicks from ${file}`)
      }
      databaseDown = false
    })

    /** The clicks of `taken` enriched, in slices that let other work in between. */
    const enrichAll = (taken: ReadonlyArray<HandedClicks>, into: (rows: Array<ClickRow>) => void) =>
      Effect.gen(function* () {
        for (const batch of taken) {
          const clicks = unpack(batch)
          for (let start = 0; start < clicks.length; start += ENRICH_SLICE) {
            const end = Math.min(clicks.length, start + ENRICH_SLICE)
            const rows = new Array<ClickRow>(end - start)
            for (let i = start; i < end; i++) rows[i - start] = enrich(clicks[i]!, batch.nonce, i)
            into(rows)
            yield* letIoIn
          }
        }
      })

    /** Enriches and writes (or spills) the handed batches; whether the database took them all. */
    const writeTaken = (taken: ReadonlyArray<HandedClicks>) =>
      Effect.gen(function* () {
        const batches: Array<ClickBatch> = []
        let batch = new ClickBatch()
        yield* enrichAll(
          taken.filter((handed) => !handed.again),
          (rows) => {
            if (batch.size >= options.batchSize) {
              batches.push(batch)
              batch = new ClickBatch()
            }
            batch.add(rows)
          }
        )
        if (batch.size > 0) batches.push(batch)
        // Clicks handed over again may be in the table already: written like a replay.
        const repeated: Array<{ rows: Array<ClickRow> }> = []
        yield* enrichAll(
          taken.filter((handed) => handed.again),
          (rows) => {
            const last = repeated.at(-1)
            if (last === undefined || last.rows.length >= REPLAY_ROWS) repeated.push({ rows })
            else last.rows.push(...rows)
          }
        )
        const fresh = yield* writeAll(batches, (group) => writeRows(repo.insertFresh(group), group.size))
        const again = yield* writeAll(repeated, (group) => writeRows(repo.insert(group.rows), group.rows.length))
        return fresh && again
      })

    const flush = Effect.gen(function* () {
      const taken = queue
      queue = []
      const last = taken.at(-1)
      // Settled even when the spill file cannot be written: those clicks are lost, and logged.
      const written =
        last === undefined ? true : yield* writeTaken(taken).pipe(Effect.ensuring(Effect.sync(() => events.settled(last.seq))))
      if (written) yield* replay
    }).pipe(lock.withPermits(1), Effect.uninterruptible)

    // Released after the loop below has been interrupted (it finishes the flush it is in).
    yield* Effect.addFinalizer(() => flush)
    // The first run, at once, replays what an earlier process left in spill files.
    yield* flush.pipe(
      // Only a spill file that cannot be written gets here: those clicks are lost, the loop goes on.
      Effect.catchAllCause((cause) => Effect.logError("clicks could not be written or spilled", cause)),
      Effect.repeat(Schedule.fixed(options.flushInterval)),
      Effect.forkScoped
    )

    return {
      add: (batch) => {
        queue.push(batch)
      },
      flush
    }
  })
