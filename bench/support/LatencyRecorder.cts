/**
 * autocannon `setupClient` module, loaded by path inside autocannon's worker thread (worker mode
 * takes a module path, not a function: autocannon 9 lib/worker.js `require(opts.setupClient)`).
 *
 * autocannon's own histogram records whole milliseconds (hdr-histogram-js with
 * lowestDiscernibleValue 1: 0.8 ms is recorded as 0, 1.9 ms as 1), too coarse for a redirect that
 * takes well under a millisecond. Its clients emit every response's duration as a float in ms
 * (process.hrtime from the request's write to the end of its response), so this module keeps those
 * and when each response ended, and sends them in chunks over the BroadcastChannel named by
 * BENCH_LATENCY_CHANNEL (the worker's copy of the environment, set by bench/support/Latency.ts just
 * before autocannon starts the worker). The last chunk, marked final, leaves when every client has
 * been destroyed, which autocannon does at the end of the run before it reports its result.
 *
 * Each connection's first response is kept apart (`firsts`): its time includes the TCP connect,
 * while the worker, just started, opens all its connections one after another; on this machine
 * those took 50-1000 ms where later responses took a few, enough to make a 10-second run's p99.9.
 *
 * Each connection also starts at its own place in the run's list of requests (BENCH_REQUESTS, set
 * the same way), spread over the list by the golden ratio: autocannon starts every connection at
 * the first, so 50 connections walked a list of 1,000 links side by side, each link getting a burst
 * of up to 50 visits at once and then none until they came round again. Spread, they go over the
 * links in turn, as the fixed-rate client does (support/PacedClient.ts).
 *
 * CommonJS (.cts) because autocannon's worker loads it with require().
 */
import type { Client, Request } from "autocannon"

const CHUNK = 4096

const channelName = process.env.BENCH_LATENCY_CHANNEL
const channel = channelName === undefined || channelName === "" ? undefined : new BroadcastChannel(channelName)
let durations = new Float64Array(CHUNK)
let ends = new Float64Array(CHUNK)
let filled = 0
let clients = 0
let done = 0
const firsts: Array<number> = []

const isRequest = (value: unknown): value is Request =>
  typeof value === "object" && value !== null && "path" in value && typeof value.path === "string"
const listed: unknown = JSON.parse(process.env.BENCH_REQUESTS ?? "[]")
const requests: Array<Request> = Array.isArray(listed) ? listed.filter(isRequest) : []
const GOLDEN = (Math.sqrt(5) - 1) / 2

const send = (final: boolean) => {
  if (channel === undefined) return
  channel.postMessage({
    durations: durations.slice(0, filled),
    ends: ends.slice(0, filled),
    firsts: Float64Array.from(final ? firsts : []),
    final
  })
  filled = 0
  if (final) channel.close()
}

export = function setupClient(client: Client): void {
  if (requests.length > 1) {
    const start = Math.floor(((clients * GOLDEN) % 1) * requests.length)
    client.setRequests([...requests.slice(start), ...requests.slice(0, start)])
  }
  clients++
  let first = true
  client.on("response", (_status: number, _bytes: number, duration: number) => {
    if (first) {
      first = false
      firsts.push(duration)
      return
    }
    durations[filled] = duration
    ends[filled] = performance.now()
    filled++
    if (filled === CHUNK) {
      send(false)
      durations = new Float64Array(CHUNK)
      ends = new Float64Array(CHUNK)
    }
  })
  // The typings list only some of the client's events; "done" is emitted by its destroy().
  const emitter: NodeJS.EventEmitter = client
  emitter.on("done", () => {
    done++
    if (done === clients) send(true)
  })
}
