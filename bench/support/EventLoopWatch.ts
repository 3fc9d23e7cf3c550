import { setTimeout as sleep } from "node:timers/promises"
import type { LoopDelay } from "../../src/Platform/LoopDelay.ts"

/** One sample of a Prometheus text exposition: name, labels, value. */
export interface PrometheusSample {
  readonly name: string
  readonly labels: ReadonlyMap<string, string>
  readonly value: number
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** The samples of a Prometheus text exposition, labels parsed (in any order); comments and odd lines skipped. */
export const parsePrometheusSamples = (text: string): ReadonlyArray<PrometheusSample> => {
  const samples: Array<PrometheusSample> = []
  for (const raw of text.split("\n")) {
    const line = raw.trim()
    if (line === "" || line.startsWith("#")) continue
    const match = SAMPLE.exec(line)
    if (match === null) continue
    const labels = new Map<string, string>()
    for (const label of (match[2] ?? "").matchAll(LABEL)) {
      labels.set(label[1] ?? "", (label[2] ?? "").replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c)))
    }
    samples.push({ name: match[1] ?? "", labels, value: Number(match[3]) })
  }
  return samples
}

export const THREADS = ["redirect", "clicks"] as const
export type Thread = (typeof THREADS)[number]

/** A record with one entry per thread. */
const perThread = <A>(f: (thread: Thread) => A): Record<Thread, A> => ({ redirect: f("redirect"), clicks: f("clicks") })

/** What the scrapes of one run saw of one thread, in ms; undefined when no scrape had the gauge. */
export interface ThreadDelay {
  /** The largest of the per-second maxima (quantile="1"). */
  readonly max: number | undefined
  /** The largest of the per-second p99 values (quantile="0.99"). */
  readonly p99: number | undefined
  /** The smallest of the per-second medians (quantile="0.5"): what a quiet second shows. */
  readonly p50Min: number | undefined
  /** Scrapes that carried the gauge. */
  readonly windows: number
  /** The thread's time from its counters (undefined: absent, or fewer than two scrapes had them). */
  readonly time: ThreadTimeSpan | undefined
}

/**
 * What thread_cpu_seconds_total and thread_runqueue_wait_seconds_total grew by between a run's
 * first and last scrape (the first taken as the run starts), in seconds.
 */
export interface ThreadTimeSpan {
  /** Seconds between the first and the last scrape with the counters. */
  readonly span: number
  readonly cpu: number
  readonly runQueueWait: number
  /**
   * The largest run-queue wait between two consecutive scrapes (1 s apart): one of the service's
   * once-a-second updates of the counter, sometimes none or two when a stall delays one of them.
   */
  readonly worstWait: number
}

/** What the click-limit counter's counters grew by over a run (click_limit_*_total). */
export interface ClickLimitSpan {
  readonly roundTrips: number
  readonly visits: number
  readonly waits: number
}

export interface LoopDelayWatch {
  /** Scrapes that answered. */
  readonly scrapes: number
  readonly threads: Readonly<Record<Thread, ThreadDelay>>
  /** Undefined when no scrape answered, and for the reference. */
  readonly clickLimits?: ClickLimitSpan | undefined
}

const CLICK_LIMIT_COUNTERS = {
  roundTrips: "click_limit_round_trips_total",
  visits: "click_limit_visits_total",
  waits: "click_limit_waits_total"
} as const

// A counter appears on /metrics with its first update: absent, it is 0.
const clickLimitReading = (samples: ReadonlyArray<PrometheusSample>): ClickLimitSpan => {
  const value = (name: string) => samples.find((s) => s.name === name)?.value ?? 0
  return {
    roundTrips: value(CLICK_LIMIT_COUNTERS.roundTrips),
    visits: value(CLICK_LIMIT_COUNTERS.visits),
    waits: value(CLICK_LIMIT_COUNTERS.waits)
  }
}

const METRIC = "event_loop_delay_seconds"

const gauge = (samples: ReadonlyArray<PrometheusSample>, thread: Thread, quantile: string) =>
  samples.find((s) => s.name === METRIC && s.labels.get("thread") === thread && s.labels.get("quantile") === quantile)?.value

const counter = (samples: ReadonlyArray<PrometheusSample>, name: string, thread: Thread) =>
  samples.find((s) => s.name === name && s.labels.get("thread") === thread)?.value

interface TimeReading {
  readonly at: number
  readonly cpu: number
  readonly runQueueWait: number
}

/** A thread's counters over the scrapes of a run. */
class TimeTrack {
  private first: TimeReading | undefined
  private last: TimeReading | undefined
  private worst = 0

  add(samples: ReadonlyArray<PrometheusSample>, thread: Thread, at: number) {
    const cpu = counter(samples, "thread_cpu_seconds_total", thread)
    const runQueueWait = counter(samples, "thread_runqueue_wait_seconds_total", thread)
    if (cpu === undefined || runQueueWait === undefined) return
    const reading = { at, cpu, runQueueWait }
    const last = this.last
    // A counter that went down is a restarted click thread: its growth starts again from here.
    if (last !== undefined && cpu >= last.cpu && runQueueWait >= last.runQueueWait) {
      this.worst = Math.max(this.worst, runQueueWait - last.runQueueWait)
    } else if (last !== undefined) {
      this.first = undefined
    }
    this.first ??= reading
    this.last = reading
  }

  span(): ThreadTimeSpan | undefined {
    const { first, last } = this
    if (first === undefined || last === undefined || last.at === first.at) return undefined
    return {
      span: (last.at - first.at) / 1000,
      cpu: last.cpu - first.cpu,
      runQueueWait: last.runQueueWait - first.runQueueWait,
      worstWait: this.worst
    }
  }
}

const scrape = async (baseUrl: string) => {
  try {
    const response = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(900) })
    if (!response.ok) return undefined
    return parsePrometheusSamples(await response.text())
  } catch {
    return undefined
  }
}

/** One thread's windows so far, in seconds (NaN: none). */
interface Figures {
  max: number
  p99: number
  p50Min: number
  windows: number
}

const noFigures = (): Figures => ({ max: Number.NaN, p99: Number.NaN, p50Min: Number.NaN, windows: 0 })

const addWindow = (entry: Figures, window: { readonly [K in keyof LoopDelay]: number | undefined }) => {
  const { max, p99, p50 } = window
  if (max === undefined && p99 === undefined && p50 === undefined) return
  entry.windows++
  if (max !== undefined && Number.isFinite(max)) entry.max = Number.isNaN(entry.max) ? max : Math.max(entry.max, max)
  if (p99 !== undefined && Number.isFinite(p99)) entry.p99 = Number.isNaN(entry.p99) ? p99 : Math.max(entry.p99, p99)
  if (p50 !== undefined && Number.isFinite(p50)) entry.p50Min = Number.isNaN(entry.p50Min) ? p50 : Math.min(entry.p50Min, p50)
}

const msOrUndefined = (seconds: number) => (Number.isNaN(seconds) ? undefined : seconds * 1000)

const delayOf = (figures: Figures, time: ThreadTimeSpan | undefined): ThreadDelay => ({
  max: msOrUndefined(figures.max),
  p99: msOrUndefined(figures.p99),
  p50Min: msOrUndefined(figures.p50Min),
  windows: figures.windows,
  time
})

/**
 * Scrapes GET `${baseUrl}/metrics` once a second (and once more at stop) for the gauges
 * event_loop_delay_seconds{thread, quantile="0.5"|"0.99"|"1"}, each of which describes the service's
 * last 1-second window; `stop` answers the largest per-second maximum and p99 of each thread. Absent
 * gauges leave the figures undefined ("n/a"), not an error. The counters thread_cpu_seconds_total and
 * thread_runqueue_wait_seconds_total are read by the same scrapes and by one more as the watch
 * starts (whose loop-delay gauges, of the second before the run, are not kept).
 */
export const watchEventLoop = (baseUrl: string, intervalMs = 1000) => {
  let stopping = false
  let scrapes = 0
  const figures = perThread(noFigures)
  const times = perThread(() => new TimeTrack())
  let limitsFirst: ClickLimitSpan | undefined
  let limitsLast: ClickLimitSpan | undefined
  const take = async (delays = true) => {
    const samples = await scrape(baseUrl)
    if (samples === undefined) return
    const at = performance.now()
    for (const thread of THREADS) times[thread].add(samples, thread, at)
    limitsLast = clickLimitReading(samples)
    limitsFirst ??= limitsLast
    if (!delays) return
    scrapes++
    for (const thread of THREADS) {
      addWindow(figures[thread], { max: gauge(samples, thread, "1"), p99: gauge(samples, thread, "0.99"), p50: gauge(samples, thread, "0.5") })
    }
  }
  const loop = (async () => {
    let next = performance.now() + intervalMs
    await take(false)
    while (!stopping) {
      const wait = next - performance.now()
      if (wait > 0) await sleep(Math.min(wait, 50))
      if (stopping) break
      if (performance.now() < next) continue
      next += intervalMs
      await take()
    }
  })()
  return {
    stop: async (): Promise<LoopDelayWatch> => {
      stopping = true
      await loop
      await take()
      const clickLimits =
        limitsFirst === undefined || limitsLast === undefined
          ? undefined
          : {
              roundTrips: limitsLast.roundTrips - limitsFirst.roundTrips,
              visits: limitsLast.visits - limitsFirst.visits,
              waits: limitsLast.waits - limitsFirst.waits
            }
      return { scrapes, threads: perThread((thread) => delayOf(figures[thread], times[thread].span())), clickLimits }
    }
  }
}

/**
 * The 1-second windows a single-threaded process reports of its own loop (the bare reference, over
 * IPC): `add` takes each as it arrives; a `watch` keeps those that arrive until its `stop`, as
 * watchEventLoop keeps those it scrapes, and answers them as the "redirect" thread (the one that
 * answers), with no click thread.
 */
export const loopWindows = () => {
  const watchers = new Set<(window: LoopDelay) => void>()
  return {
    add: (window: LoopDelay) => {
      for (const watcher of watchers) watcher(window)
    },
    watch: () => {
      const figures = noFigures()
      const watcher = (window: LoopDelay) => addWindow(figures, window)
      watchers.add(watcher)
      return {
        stop: async (): Promise<LoopDelayWatch> => {
          watchers.delete(watcher)
          return {
            scrapes: figures.windows,
            threads: { redirect: delayOf(figures, undefined), clicks: delayOf(noFigures(), undefined) }
          }
        }
      }
    }
  }
}

/** The larger of two optional figures. */
export const maxOf = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b)

/** The smaller of two optional figures. */
const minOf = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b)

/** Two runs' thread times as one: their sums, the worse worst interval. */
const addSpans = (a: ThreadTimeSpan | undefined, b: ThreadTimeSpan | undefined): ThreadTimeSpan | undefined =>
  a === undefined
    ? b
    : b === undefined
      ? a
      : {
          span: a.span + b.span,
          cpu: a.cpu + b.cpu,
          runQueueWait: a.runQueueWait + b.runQueueWait,
          worstWait: Math.max(a.worstWait, b.worstWait)
        }

/** Several runs' watches as one: the largest figures of each thread. */
export const mergeWatches = (watches: ReadonlyArray<LoopDelayWatch>): LoopDelayWatch => ({
  scrapes: watches.reduce((sum, w) => sum + w.scrapes, 0),
  threads: perThread(
    (thread): ThreadDelay => ({
      max: watches.reduce<number | undefined>((acc, w) => maxOf(acc, w.threads[thread].max), undefined),
      p99: watches.reduce<number | undefined>((acc, w) => maxOf(acc, w.threads[thread].p99), undefined),
      p50Min: watches.reduce<number | undefined>((acc, w) => minOf(acc, w.threads[thread].p50Min), undefined),
      windows: watches.reduce((sum, w) => sum + w.threads[thread].windows, 0),
      time: watches.reduce<ThreadTimeSpan | undefined>((acc, w) => addSpans(acc, w.threads[thread].time), undefined)
    })
  )
})
