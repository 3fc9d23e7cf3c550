import { Effect, Metric, MetricBoundaries, MetricKey, MetricKeyType, MetricLabel, MetricState } from "effect"
import type { MetricPair } from "effect"
import { collected, type Family } from "./Collectors.ts"
import { FixedHistogram } from "./FixedHistogram.ts"
import type { ThreadTime } from "./ThreadTime.ts"

const httpRequestsKey = MetricKey.counter("http_requests_total", {
  description: "API requests answered, by route, method and status",
  incremental: true
})

const httpDurationKey = MetricKey.histogram(
  "http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "API request latency in seconds, by route and method"
)

/**
 * One metric per label set, made once: `Metric.tagged` would build and hash a new key on every
 * update, a visible share of a cheap request.
 */
const perLabels = <Type extends MetricKeyType.MetricKeyType.Untyped, M>(
  key: MetricKey.MetricKey<Type>,
  make: (key: MetricKey.MetricKey<Type>) => M
) => {
  const made = new Map<string, M>()
  return (labels: ReadonlyArray<readonly [string, string]>): M => {
    const id = labels.map(([name, value]) => `${name}=${value}`).join("\u0000")
    let metric = made.get(id)
    if (metric === undefined) {
      metric = make(MetricKey.taggedWithLabels(key, labels.map(([name, value]) => MetricLabel.make(name, value))))
      made.set(id, metric)
    }
    return metric
  }
}

const requestCounters = perLabels(httpRequestsKey, Metric.fromMetricKey)
const requestDurations = perLabels(httpDurationKey, Metric.fromMetricKey)

/** Counts one answered API request and its latency. */
export const recordHttpRequest = (route: string, method: string, status: number, seconds: number) => {
  requestCounters([["route", route], ["method", method], ["status", String(status)]]).unsafeUpdate(1, [])
  requestDurations([["route", route], ["method", method]]).unsafeUpdate(seconds, [])
}

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")

const labels = (tags: ReadonlyArray<{ key: string; value: string }>, extra?: string) => {
  const parts = tags.map((tag) => `${tag.key}="${escapeLabel(tag.value)}"`)
  if (extra !== undefined) parts.push(extra)
  return parts.length === 0 ? "" : `{${parts.join(",")}}`
}

const promName = (name: string) => name.replace(/[^a-zA-Z0-9_:]/g, "_")

const formatNumber = (n: number) => (Number.isFinite(n) ? String(n) : n > 0 ? "+Inf" : "-Inf")

/** Gauges of a window's quantiles: promtool accepts a `quantile` label on a summary only. */
const QUANTILE_GAUGES = new Set(["event_loop_delay_seconds"])

/** What a metric's lines start with, made once per metric key: a scrape then only appends its numbers. */
interface Rendered {
  readonly name: string
  readonly help: string | undefined
  /** `name{labels} `, or for a histogram `name_sum{labels} `. */
  readonly head: string
  readonly countHead: string
  /** `name_bucket{labels,le="bound"} ` per bucket of a histogram. */
  buckets: ReadonlyArray<string>
}

const renderedKeys = new WeakMap<MetricKey.MetricKey.Untyped, Rendered>()

const renderedOf = (metricKey: MetricKey.MetricKey.Untyped, histogram: boolean): Rendered => {
  let rendered = renderedKeys.get(metricKey)
  if (rendered === undefined) {
    const name = promName(metricKey.name)
    const tags = labels(metricKey.tags)
    rendered = {
      name,
      help: metricKey.description._tag === "Some" ? metricKey.description.value : undefined,
      head: histogram ? `${name}_sum${tags} ` : `${name}${tags} `,
      countHead: `${name}_count${tags} `,
      buckets: []
    }
    renderedKeys.set(metricKey, rendered)
  }
  return rendered
}

const bucketHeads = (rendered: Rendered, tags: ReadonlyArray<MetricLabel.MetricLabel>, buckets: ReadonlyArray<readonly [number, number]>) => {
  if (rendered.buckets.length !== buckets.length) {
    rendered.buckets = buckets.map(([boundary]) => `${rendered.name}_bucket${labels(tags, `le="${formatNumber(boundary)}"`)} `)
  }
  return rendered.buckets
}

/**
 * The Prometheus text exposition (format 0.0.4) of every metric of this process, then `extra`.
 * Effect's own fiber metrics (effect_fiber_*) are left out: counters without `_total`, no help.
 */
export const renderPrometheus = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>, extra: ReadonlyArray<Family> = []): string => {
  const families = new Map<string, { type: string; help: string | undefined; text: string }>()
  const append = (name: string, type: string, help: string | undefined, text: string) => {
    const entry = families.get(name)
    if (entry === undefined) families.set(name, { type, help, text })
    else entry.text += text
  }
  for (const { metricKey, metricState } of pairs) {
    if (metricKey.name.startsWith("effect_")) continue
    if (MetricState.isCounterState(metricState)) {
      const rendered = renderedOf(metricKey, false)
      // Only an incremental counter is a Prometheus counter; Effect's others go down too (effect_fiber_active).
      const monotonic = MetricKeyType.isCounterKey(metricKey.keyType) && metricKey.keyType.incremental
      append(rendered.name, monotonic ? "counter" : "gauge", rendered.help, `${rendered.head}${formatNumber(Number(metricState.count))}\n`)
    } else if (MetricState.isGaugeState(metricState)) {
      const rendered = renderedOf(metricKey, false)
      const type = QUANTILE_GAUGES.has(rendered.name) ? "summary" : "gauge"
      append(rendered.name, type, rendered.help, `${rendered.head}${formatNumber(Number(metricState.value))}\n`)
    } else if (MetricState.isHistogramState(metricState)) {
      const rendered = renderedOf(metricKey, true)
      const heads = bucketHeads(rendered, metricKey.tags, metricState.buckets)
      let text = ""
      let i = 0
      for (const [, count] of metricState.buckets) text += `${heads[i++]}${count}\n`
      append(rendered.name, "histogram", rendered.help, `${text}${rendered.head}${metricState.sum}\n${rendered.countHead}${metricState.count}\n`)
    }
  }
  for (const { name, type, help, samples } of extra) append(name, type, help, samples.length === 0 ? "" : `${samples.join("\n")}\n`)
  let out = ""
  for (const [name, { type, help, text }] of families) {
    if (help !== undefined) out += `# HELP ${name} ${help.replace(/\n/g, " ")}\n`
    out += `# TYPE ${name} ${type}\n${text}`
  }
  return out
}

/** Every metric of this process, with the registered collectors' families and `extra`. */
export const prometheusText = (extra: ReadonlyArray<Family> = []) =>
  Effect.map(Metric.snapshot, (pairs) => renderPrometheus(pairs, [...collected(), ...redirectLatencyFamily(), ...extra]))

const redirectsKey = MetricKey.counter("redirects_total", {
  description: "Requests answered by the redirect handler, by status",
  incremental: true
})
const redirectCounters = perLabels(redirectsKey, Metric.fromMetricKey)
const redirectsByStatus = new Map<number, Metric.Metric.Counter<number>>()
const NO_TAGS: ReadonlyArray<MetricLabel.MetricLabel> = []

/** Counts one answer of the redirect hot path (called per request: no Effect, no allocation once warm). */
export const recordRedirect = (status: number) => {
  let counter = redirectsByStatus.get(status)
  if (counter === undefined) {
    counter = redirectCounters([["status", String(status)]])
    redirectsByStatus.set(status, counter)
  }
  counter.unsafeUpdate(1, NO_TAGS)
}

const redirectLookups = Metric.counter("redirect_lookups_total", {
  description: "Database lookups of the redirect handler (cache misses of its link and unknown-alias caches)",
  incremental: true
})

/** Counts one database lookup of the redirect hot path. */
export const recordRedirectLookup = () => redirectLookups.unsafeUpdate(1, NO_TAGS)

const redirectCacheHits = Metric.counter("redirect_cache_hits_total", {
  description: "Redirects answered from the redirect handler's caches without a database lookup",
  incremental: true
})

/** Counts one redirect answered from the caches. */
export const recordRedirectCacheHit = () => redirectCacheHits.unsafeUpdate(1, NO_TAGS)

const redirectCacheMisses = Metric.counter("redirect_cache_misses_total", {
  description: "Redirects whose alias was in neither of the redirect handler's caches (answered after a database lookup, shared by concurrent misses)",
  incremental: true
})

/** Counts one redirect that its caches could not answer. */
export const recordRedirectCacheMiss = () => redirectCacheMisses.unsafeUpdate(1, NO_TAGS)

const clickLimitRoundTrips = Metric.counter("click_limit_round_trips_total", {
  description: "Statements (PostgreSQL) or pipelines (Redis) sent to count the visits of links with max_clicks",
  incremental: true
})

const clickLimitVisits = Metric.counter("click_limit_visits_total", {
  description: "Visits of links with max_clicks counted (those given a turn, from a round trip or a lease, and those that found none left)",
  incremental: true
})

/** Counts one round trip of the click-limit counter and the visits it counted. */
export const recordClickLimitRoundTrip = (visits: number) => {
  clickLimitRoundTrips.unsafeUpdate(1, NO_TAGS)
  clickLimitVisits.unsafeUpdate(visits, NO_TAGS)
}

/** Counts one visit of a limited link answered from this instance's lease, without a round trip. */
export const recordClickLimitLeasedVisit = () => clickLimitVisits.unsafeUpdate(1, NO_TAGS)

const clickLimitWaits = Metric.counter("click_limit_waits_total", {
  description: "Visits of links with max_clicks that waited for a round trip (none answered from a lease)",
  incremental: true
})

/** Counts one visit of a limited link that waits for a round trip. */
export const recordClickLimitWait = () => clickLimitWaits.unsafeUpdate(1, NO_TAGS)

const redirectLatency = new FixedHistogram([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5])

/** Records how long one answer of the redirect handler took, from its request to its response's end (no Effect, no allocation). */
export const recordRedirectLatency = (seconds: number) => redirectLatency.observe(seconds)

const redirectLatencyFamily = (): ReadonlyArray<Family> => [
  {
    name: "redirect_duration_seconds",
    type: "histogram",
    help: "Time from a request to the end of the redirect handler's answer (redirects, 404s, 405s and its 503s), in seconds",
    samples: redirectLatency.samples("redirect_duration_seconds")
  }
]

const unavailableKey = MetricKey.counter("http_unavailable_total", {
  description: "503 answers by reason: rate_limited, overloaded, database_unavailable, deadline, stopping, report_too_slow",
  incremental: true
})
const unavailableCounters = perLabels(unavailableKey, Metric.fromMetricKey)

/** Why a 503 was answered. */
export type UnavailableReason = "rate_limited" | "overloaded" | "database_unavailable" | "deadline" | "stopping" | "report_too_slow"

const UNAVAILABLE_REASONS: ReadonlyArray<UnavailableReason> = ["rate_limited", "overloaded", "database_unavailable", "deadline", "stopping", "report_too_slow"]

/** The reason of a 503 answered with catalogue code `code`. */
export const unavailableReasonOf = (code: number | undefined): UnavailableReason => {
  switch (code) {
    case 10900:
      return "rate_limited"
    case 10901:
      return "overloaded"
    case 10903:
      return "stopping"
    case 10508:
      return "report_too_slow"
    default:
      return "database_unavailable"
  }
}

/** Counts one 503 answer. */
export const recordUnavailable = (reason: UnavailableReason) => unavailableCounters([["reason", reason]]).unsafeUpdate(1, NO_TAGS)

export const clickBufferDepth = Metric.gauge("click_buffer_depth", {
  description: "Clicks the redirect thread holds: not yet handed to the click writer, or handed and not yet written or spilled"
})

export const clicksHandedOver = Metric.counter("clicks_handed_over_total", {
  description: "Clicks the redirect thread handed to the click writer thread",
  incremental: true
})

export const clicksDropped = Metric.counter("clicks_dropped_total", {
  description: "Clicks not recorded because the click writer held too many unwritten clicks (CLICK_BACKLOG_LIMIT)",
  incremental: true
})

export const clickWorkerRestarts = Metric.counter("click_worker_restarts_total", {
  description: "Times the click writer thread stopped unexpectedly and was started again",
  incremental: true
})

const loopDelayKey = MetricKey.gauge("event_loop_delay_seconds", {
  description: "Event-loop delay of a thread over the last second: quantile 0.5, 0.99 and 1 (the maximum)"
})
const loopDelayGauges = perLabels(loopDelayKey, Metric.fromMetricKey)

/** Sets the event-loop delay gauges of `thread` ("redirect" or "clicks") to one window's figures. */
export const recordLoopDelay = (thread: string, delay: { readonly p50: number; readonly p99: number; readonly max: number }) => {
  loopDelayGauges([["thread", thread], ["quantile", "0.5"]]).unsafeUpdate(delay.p50, NO_TAGS)
  loopDelayGauges([["thread", thread], ["quantile", "0.99"]]).unsafeUpdate(delay.p99, NO_TAGS)
  loopDelayGauges([["thread", thread], ["quantile", "1"]]).unsafeUpdate(delay.max, NO_TAGS)
}

const threadCpuKey = MetricKey.counter("thread_cpu_seconds_total", {
  description: "CPU time of a thread (on a core), from Linux's /proc/thread-self/schedstat",
  incremental: true
})
const threadWaitKey = MetricKey.counter("thread_runqueue_wait_seconds_total", {
  description: "Time a thread was runnable but waiting for a core, from Linux's /proc/thread-self/schedstat",
  incremental: true
})
const threadCpuCounters = perLabels(threadCpuKey, Metric.fromMetricKey)
const threadWaitCounters = perLabels(threadWaitKey, Metric.fromMetricKey)

/** Adds a slice of `thread`'s time ("redirect" or "clicks") to its counters; nothing where the OS does not tell. */
export const recordThreadTime = (thread: string, time: ThreadTime | undefined) => {
  if (time === undefined) return
  threadCpuCounters([["thread", thread]]).unsafeUpdate(time.cpu, NO_TAGS)
  threadWaitCounters([["thread", thread]]).unsafeUpdate(time.runQueueWait, NO_TAGS)
}

export const clickFlushSeconds = Metric.histogram(
  "click_flush_seconds",
  MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]),
  "Time to write one batch of clicks"
)

export const clicksWritten = Metric.counter("clicks_written_total", {
  description: "Clicks written to the database (replays included)",
  incremental: true
})

export const clicksSpilled = Metric.counter("clicks_spilled_total", {
  description: "Clicks written to the spill file because the database was unavailable",
  incremental: true
})

export const clicksReplayed = Metric.counter("clicks_replayed_total", {
  description: "Clicks read back from spill files and written to the database",
  incremental: true
})

// The documented counters exist from the first scrape, at zero (the click counters: ClickLog.ts).
for (const counter of [redirectLookups, redirectCacheHits, redirectCacheMisses, clickLimitRoundTrips, clickLimitVisits, clickLimitWaits]) counter.unsafeUpdate(0, NO_TAGS)
for (const status of [301, 302, 307, 404, 405, 503]) redirectCounters([["status", String(status)]]).unsafeUpdate(0, NO_TAGS)
for (const reason of UNAVAILABLE_REASONS) unavailableCounters([["reason", reason]]).unsafeUpdate(0, NO_TAGS)
// Reading a histogram enters it in the registry with no observation.
clickFlushSeconds.unsafeValue(NO_TAGS)
