import { Agent } from "node:http"
import { type Answer, hit } from "./Traffic.ts"

export interface MixedLoadOptions {
  /** Where the load goes (the proxy). */
  readonly baseUrl: string
  /** Host header of the short links `/<prefix>0` .. `/<prefix><links - 1>`. */
  readonly shortHost: string
  readonly prefix: string
  readonly links: number
  readonly redirectsPerSecond: number
  /** Host header of the API. */
  readonly apiHost: string
  readonly token: string
  readonly domainId: number
  readonly readsPerSecond: number
  readonly createsPerSecond: number
}

export interface Tally {
  /** Answers by status; 0 counts requests that got no answer (connection errors, timeouts). */
  readonly byStatus: Record<string, number>
  /** Answers that are neither 2xx nor 3xx, and requests that got no answer. */
  readonly failed: number
  /** Requests not sent because as many as the connections allow were waiting for answers. */
  readonly skipped: number
}

export interface MixedLoadResult {
  readonly redirects: Tally
  readonly reads: Tally
  readonly creates: Tally
  readonly seconds: number
}

const TICK_MS = 5

/**
 * Requests started at an even pace (as many as are due every few milliseconds, none waiting for
 * another: autocannon's rates send each second's requests in one burst, with silence between) over
 * at most `connections` keep-alive connections, until `stop`, which waits for every request started.
 * A request due while every connection waits for an answer is skipped (counted), so that a slow
 * moment neither piles up requests here nor opens connections without end.
 */
const pacedStream = (started: number, perSecond: number, connections: number, request: (n: number, agent: Agent) => Promise<Answer>) => {
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const byStatus: Record<string, number> = {}
  const inFlight = new Set<Promise<void>>()
  let launched = 0
  let skipped = 0
  const timer = setInterval(() => {
    const due = Math.floor(((Date.now() - started) / 1000) * perSecond)
    for (; launched < due; launched++) {
      if (inFlight.size >= connections) {
        skipped++
        continue
      }
      const sent = request(launched, agent).then((answer) => {
        byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1
        inFlight.delete(sent)
      })
      inFlight.add(sent)
    }
  }, TICK_MS)
  return {
    inFlight: () => inFlight.size,
    stop: async (): Promise<Tally> => {
      clearInterval(timer)
      while (inFlight.size > 0) await Promise.all(inFlight)
      agent.destroy()
      const failed = Object.entries(byStatus).reduce((sum, [status, count]) => sum + (/^[23]\d\d$/.test(status) ? 0 : count), 0)
      return { byStatus, failed, skipped }
    }
  }
}

/**
 * Redirects as a browser, API reads (link search, alias lookup, domain list, in turn) and link
 * creations, each at its own even rate, until `stop`. Every request ends as an answer or a
 * connection error, both counted.
 */
export const startMixedLoad = (options: MixedLoadOptions) => {
  const started = Date.now()
  const redirects = pacedStream(started, options.redirectsPerSecond, 50, (n, agent) =>
    hit(options.baseUrl, `/${options.prefix}${n % options.links}`, { host: options.shortHost, agent })
  )
  const api = { host: options.apiHost, headers: { authorization: `Bearer ${options.token}` } }
  const readPaths = [
    (n: number) => `/api/v4/${options.domainId}/links?page=${1 + (n % 4)}`,
    (n: number) => `/api/v4/${options.domainId}/links/exists?alias=${options.prefix}${n % options.links}`,
    () => "/api/v4/domains"
  ]
  const reads = pacedStream(started, options.readsPerSecond, 10, (n, agent) =>
    hit(options.baseUrl, readPaths[n % readPaths.length]!(n), { ...api, agent })
  )
  const run = started.toString(36)
  const creates = pacedStream(started, options.createsPerSecond, 10, (n, agent) =>
    hit(options.baseUrl, `/api/v4/${options.domainId}/links`, {
      ...api,
      agent,
      method: "POST",
      headers: { ...api.headers, "content-type": "application/json" },
      body: JSON.stringify({ url: `https://example.com/new/${run}/${n}`, alias: `new-${run}-${n}`, override_404_check: 1 })
    })
  )
  let stopped: Promise<MixedLoadResult> | undefined
  const stop = async (): Promise<MixedLoadResult> => {
    const [redirectTally, readTally, createTally] = await Promise.all([redirects.stop(), reads.stop(), creates.stop()])
    return { redirects: redirectTally, reads: readTally, creates: createTally, seconds: (Date.now() - started) / 1000 }
  }
  return {
    startedAt: started,
    /** Link creations waiting for their answer now. */
    createsInFlight: () => creates.inFlight(),
    /** Stops starting requests and waits for those started; the same result when called again. */
    stop: () => (stopped ??= stop())
  }
}
