import autocannon from "autocannon"
import { randomBytes } from "node:crypto"
import { fileURLToPath } from "node:url"
import { setTimeout as sleep } from "node:timers/promises"
import { percentile } from "./Percentile.ts"

/**
 * Percentiles of the responses of one run, in ms with the recorder's full (sub-ms) precision; each
 * connection's first response (its TCP connect included) apart.
 */
export interface LatencySummary {
  readonly count: number
  /** Connections' first responses: how many, and the slowest. */
  readonly firstCount: number
  readonly firstMax: number
  readonly p50: number
  readonly p99: number
  readonly p999: number
  readonly max: number
  /** Responses per second in the busiest and the quietest full 100 ms slice of the run. */
  readonly busiest100ms: number
  readonly quietest100ms: number
}

const RECORDER = fileURLToPath(new URL("./LatencyRecorder.cts", import.meta.url))

const isChunk = (
  data: unknown
): data is {
  readonly durations: Float64Array
  readonly ends: Float64Array
  readonly firsts: Float64Array
  readonly final: boolean
} =>
  typeof data === "object" &&
  data !== null &&
  "durations" in data &&
  data.durations instanceof Float64Array &&
  "ends" in data &&
  data.ends instanceof Float64Array &&
  "firsts" in data &&
  data.firsts instanceof Float64Array &&
  "final" in data &&
  typeof data.final === "boolean"


export const summarize = (durations: Float64Array, ends: Float64Array, firsts: Float64Array): LatencySummary => {
  const sorted = durations.slice().sort()
  // Responses per 100 ms slice from the first response; the last, partial slice is left out.
  let busiest = Number.NaN
  let quietest = Number.NaN
  if (ends.length > 0) {
    const first = ends.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY)
    const last = ends.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY)
    const slices = new Uint32Array(Math.floor((last - first) / 100))
    for (const end of ends) {
      const slice = Math.floor((end - first) / 100)
      if (slice < slices.length) slices[slice] = (slices[slice] ?? 0) + 1
    }
    if (slices.length > 0) {
      busiest = slices.reduce((a, b) => Math.max(a, b), 0) * 10
      quietest = slices.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY) * 10
    }
  }
  return {
    count: sorted.length,
    firstCount: firsts.length,
    firstMax: firsts.length === 0 ? Number.NaN : firsts.reduce((a, b) => Math.max(a, b), 0),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    p999: percentile(sorted, 0.999),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
    busiest100ms: busiest,
    quietest100ms: quietest
  }
}

const concat = (parts: ReadonlyArray<Float64Array>) => {
  const all = new Float64Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    all.set(part, at)
    at += part.length
  }
  return all
}

/**
 * One autocannon run in worker mode, with every response's latency kept at full precision by
 * LatencyRecorder.cts in the worker, which also starts each connection at its own place in
 * `options.requests`: autocannon's result and the summary of those latencies (undefined when the
 * recorder's last chunk did not arrive within 5 s of the result).
 */
export const autocannonWithLatencies = async (
  options: autocannon.Options & { readonly workers: number }
): Promise<{ readonly result: autocannon.Result; readonly latency: LatencySummary | undefined }> => {
  const name = `bench-latency-${randomBytes(6).toString("hex")}`
  const channel = new BroadcastChannel(name)
  const durations: Array<Float64Array> = []
  const ends: Array<Float64Array> = []
  const firsts: Array<Float64Array> = []
  let finished = false
  channel.onmessage = (event: unknown) => {
    const data = typeof event === "object" && event !== null && "data" in event ? event.data : undefined
    if (!isChunk(data)) return
    durations.push(data.durations)
    ends.push(data.ends)
    firsts.push(data.firsts)
    if (data.final) finished = true
  }
  try {
    // The worker gets a copy of this process's environment when autocannon creates it.
    process.env.BENCH_LATENCY_CHANNEL = name
    process.env.BENCH_REQUESTS = JSON.stringify(options.requests ?? [])
    const workerOptions = { ...options }
    // @types/autocannon types setupClient as a function only; in worker mode autocannon 9 takes the
    // path of a module exporting it (lib/validate.js, lib/worker.js), which the typings omit.
    Reflect.set(workerOptions, "setupClient", RECORDER)
    const result = await autocannon(workerOptions)
    const deadline = Date.now() + 5000
    while (!finished && Date.now() < deadline) await sleep(20)
    return { result, latency: finished ? summarize(concat(durations), concat(ends), concat(firsts)) : undefined }
  } finally {
    delete process.env.BENCH_LATENCY_CHANNEL
    delete process.env.BENCH_REQUESTS
    channel.close()
  }
}
