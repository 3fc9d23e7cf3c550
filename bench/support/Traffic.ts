import autocannon from "autocannon"
import { type Agent, request } from "node:http"
import { generatorOptions } from "./Load.ts"
import { requestJson } from "./Setup.ts"

export const BROWSER =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"

/** A domain of `links` short links `/<prefix><n>`, made through the API; the domain's id. */
export const makeShortLinks = async (api: string, token: string, domain: string, prefix: string, links: number) => {
  const created = (await requestJson("POST", `${api}/domains`, { token, body: { domain } })).json
  const objects = typeof created === "object" && created !== null && "objects" in created ? created.objects : undefined
  const first: unknown = Array.isArray(objects) ? objects[0] : undefined
  if (typeof first !== "object" || first === null || !("id" in first) || typeof first.id !== "number") {
    throw new Error(`no domain id in ${JSON.stringify(created).slice(0, 300)}`)
  }
  const domainId = first.id
  let next = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let n = next++; n < links; n = next++) {
        await requestJson("POST", `${api}/${domainId}/links`, {
          token,
          body: { url: `https://example.com/${prefix}/${n}`, alias: `${prefix}${n}`, override_404_check: 1 }
        })
      }
    })
  )
  return domainId
}

export interface Answer {
  readonly status: number
  readonly ms: number
  readonly body: string
}

/** One request through node:http (so that Host can be set); status 0 when the connection failed. */
export const hit = (
  baseUrl: string,
  path: string,
  options: { host?: string; method?: string; headers?: Record<string, string>; body?: string; agent?: Agent } = {}
) =>
  new Promise<Answer>((resolve) => {
    const started = performance.now()
    const req = request(
      new URL(path, baseUrl),
      {
        method: options.method ?? "GET",
        headers: { "user-agent": BROWSER, ...(options.host === undefined ? {} : { host: options.host }), ...options.headers },
        timeout: 30_000,
        ...(options.agent === undefined ? {} : { agent: options.agent })
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.once("end", () =>
          resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body: Buffer.concat(chunks).toString() })
        )
      }
    )
    req.once("error", () => resolve({ status: 0, ms: performance.now() - started, body: "" }))
    req.once("timeout", () => req.destroy())
    req.end(options.body)
  })

export interface LoadResult {
  readonly byStatus: Record<string, number>
  readonly errors: number
  readonly timeouts: number
  readonly p50: number
  readonly p99: number
  readonly requestsPerSecond: number
}

/** Redirect load over `/<prefix>0` .. `/<prefix><links - 1>` of a short domain, as a browser. */
export const redirectLoad = async (
  baseUrl: string,
  host: string,
  prefix: string,
  links: number,
  seconds: number,
  connections: number,
  /** Requests per second in all; unset: as fast as the service answers. */
  rate?: number
): Promise<LoadResult> => {
  const result = await autocannon({
    ...generatorOptions,
    ...(rate === undefined ? {} : { overallRate: rate }),
    url: baseUrl,
    connections,
    duration: seconds,
    headers: { "user-agent": BROWSER, host },
    requests: Array.from({ length: links }, (_, n) => ({ method: "GET" as const, path: `/${prefix}${n}` }))
  })
  const stats = result.statusCodeStats as Record<string, { count: number } | undefined>
  return {
    byStatus: Object.fromEntries(Object.entries(stats).map(([status, entry]) => [status, entry?.count ?? 0])),
    errors: result.errors,
    timeouts: result.timeouts,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requestsPerSecond: result.requests.average
  }
}

export const statuses = (byStatus: Record<string, number>) =>
  Object.entries(byStatus)
    .map(([status, count]) => `${status}×${count}`)
    .join(" ") || "none"

/** Counts of each status among answers, as `statuses` writes them. */
export const tally = (answers: ReadonlyArray<Answer>) => {
  const byStatus: Record<string, number> = {}
  for (const answer of answers) byStatus[String(answer.status)] = (byStatus[String(answer.status)] ?? 0) + 1
  return byStatus
}

export const maxMs = (answers: ReadonlyArray<Answer>) => Math.max(0, ...answers.map((answer) => answer.ms))
