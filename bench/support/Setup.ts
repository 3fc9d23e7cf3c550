import type { Cleanup } from "./Cleanup.ts"
import { freePort } from "./FreePort.ts"
import { startService } from "./ServiceProcess.ts"

/** One JSON request during setup; anything but a 2xx answer is an error naming the request. */
export const requestJson = async (
  method: "GET" | "POST" | "PUT",
  url: string,
  options: { readonly token?: string; readonly body?: unknown } = {}
): Promise<{ readonly text: string; readonly json: unknown }> => {
  const headers: Record<string, string> = {}
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
  if (options.body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(url, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text.slice(0, 500)}`)
  return { text, json: JSON.parse(text) }
}

export const accessTokenOf = (json: unknown): string => {
  if (typeof json === "object" && json !== null && "access_token" in json && typeof json.access_token === "string") {
    return json.access_token
  }
  throw new Error(`no access_token in ${JSON.stringify(json).slice(0, 500)}`)
}

export const ADMIN_EMAIL = "bench@example.com"
export const ADMIN_PASSWORD = "bench-password-123"

/** A bench service's environment: `databaseEnv`, the rate limits and the per-account report limit lifted, quiet logs, a known admin. */
export const benchServiceEnv = (databaseEnv: Record<string, string>) => ({
  ...databaseEnv,
  RATE_LIMIT_PER_SECOND: "1000000",
  RATE_LIMIT_PER_TOKEN_PER_SECOND: "1000000",
  ANALYTICS_CONCURRENCY_PER_ACCOUNT: "100",
  LOG_LEVEL: "warning",
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  TOKEN_SECRET: "bench"
})

/** The real service on `databaseEnv` with the rate limit lifted, and an access token of its admin. */
export const startAdminService = async (cleanup: Cleanup, databaseEnv: Record<string, string>) => {
  const service = await startService(cleanup, { port: await freePort(), readyTimeoutMs: 60_000, env: benchServiceEnv(databaseEnv) })
  const api = `${service.baseUrl}/api/v4`
  const credentials = { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }
  const token = accessTokenOf((await requestJson("POST", `${api}/access_token`, { body: credentials })).json)
  return { service, api, credentials, token }
}
