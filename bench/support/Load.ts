import autocannon from "autocannon"

export interface Scenario {
  readonly name: string
  readonly url: string
  readonly connections: number
  readonly method?: "GET" | "POST"
  readonly headers?: Record<string, string>
  readonly body?: string
}

export interface Measurement {
  readonly scenario: Scenario
  readonly requestsPerSecond: number
  /** Requests answered in the measured run. */
  readonly requests: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
}

// One worker thread generates the load, so the reference server on this process's main thread does
// not share its event loop with the load generator.
/** The load generator's settings shared by every bench, so that their numbers compare. */
export const generatorOptions = { workers: 1 } as const

const run = (scenario: Scenario, seconds: number) =>
  autocannon({
    ...generatorOptions,
    url: scenario.url,
    connections: scenario.connections,
    duration: seconds,
    method: scenario.method ?? "GET",
    ...(scenario.headers === undefined ? {} : { headers: scenario.headers }),
    ...(scenario.body === undefined ? {} : { body: scenario.body })
  })

/** A warm-up run, whose numbers are dropped, then the measured run. */
export const measure = async (scenario: Scenario, seconds: number, warmUpSeconds: number): Promise<Measurement> => {
  if (warmUpSeconds > 0) await run(scenario, warmUpSeconds)
  const result = await run(scenario, seconds)
  return {
    scenario,
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts
  }
}
