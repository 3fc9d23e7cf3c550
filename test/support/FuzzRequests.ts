import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { request as httpRequest } from "node:http"
import { ErrorCatalogue, isErrorCode } from "../../src/Platform/ErrorCatalogue.ts"
import { at } from "./Http.ts"
import { BaseUrl } from "./TestServer.ts"
import { type Endpoint, isLogin } from "./ApiContract.ts"

// Raw HTTP requests (any method, path, header or body) and the checks every answer of the API must pass

export interface FuzzRequest {
  readonly method: string
  /** Path and query, as sent (already encoded). */
  readonly path: string
  readonly headers: Record<string, string>
  /** undefined: no body at all. */
  readonly body?: string
  /** Send the body chunked (no Content-Length). */
  readonly chunked?: boolean
}

export interface Answer {
  readonly status: number
  readonly contentType: string
  readonly text: string
}

export const describeRequest = (request: FuzzRequest) => {
  const body = request.body === undefined ? "" : ` body(${request.body.length})=${request.body.slice(0, 200)}`
  return `${request.method} ${request.path.slice(0, 300)} headers=${JSON.stringify(request.headers).slice(0, 300)}${body}`
}

/**
 * Sends one request over its own connection, with any method, Host, header or body, and the path
 * exactly as given (a URL object would resolve "..", "%2E%2E" and "\\" before sending).
 */
export const send = (request: FuzzRequest) =>
  Effect.flatMap(BaseUrl, (base) =>
    Effect.async<Answer>((resume) => {
      const { hostname, port } = new URL(base)
      const headers: Record<string, string> = { ...request.headers }
      const body = request.body === undefined ? undefined : Buffer.from(request.body)
      if (body !== undefined && request.chunked !== true) headers["content-length"] = String(body.length)
      let settled = false
      const fail = (why: string) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        client.destroy()
        resume(Effect.dieMessage(`no answer (${why}) to ${describeRequest(request)}`))
      }
      const client = httpRequest({ host: hostname, port, method: request.method, path: request.path, headers, agent: false })
      const timer = setTimeout(() => fail("timeout"), 15_000)
      client.on("response", (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          const type = response.headers["content-type"]
          resume(Effect.succeed({ status: response.statusCode ?? 0, contentType: type ?? "", text: Buffer.concat(chunks).toString("utf8") }))
        })
        response.on("error", (error) => fail(error.message))
      })
      client.on("error", (error) => fail(error.message))
      client.end(body)
      return Effect.sync(() => fail("interrupted"))
    })
  )

// What every answer must look like

export const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/** Keys a framework body would carry; never part of ours. */
export const FRAMEWORK_KEYS = new Set(["_tag", "issues", "_id", "stack"])

export const frameworkKeys = (value: unknown, depth = 0): ReadonlyArray<string> => {
  if (depth > 8 || typeof value !== "object" || value === null) return []
  if (Array.isArray(value)) return value.slice(0, 60).flatMap((item) => frameworkKeys(item, depth + 1))
  return Object.entries(value).flatMap(([key, item]) => [
    ...(FRAMEWORK_KEYS.has(key) ? [key] : []),
    ...frameworkKeys(item, depth + 1)
  ])
}

/** Catalogue codes answered with another status than their own, where the contract says so. */
export const STATUS_OVERRIDES: ReadonlyArray<{ readonly endpoint: string; readonly code: number; readonly status: number }> = [
  // A non-numeric domain on E4 is 400 + 10101.
  { endpoint: "links.create", code: 10101, status: 400 },
  // docs/decisions/0011-links.md: an id of a domain outside the caller's account on T1, T2, E15 is 404
  // with their own code.
  { endpoint: "tags.listTags", code: 10301, status: 404 },
  { endpoint: "tags.createTag", code: 10301, status: 404 },
  { endpoint: "tags.listUtmTemplates", code: 10201, status: 404 },
  // G1's domain_id is a query parameter: missing or not an id is invalid input.
  { endpoint: "groups.listGroups", code: 10101, status: 400 },
  // A group_id that is not an id is invalid input; an unknown or invisible one is 404.
  { endpoint: "linkSearch.search", code: 10160, status: 400 },
  { endpoint: "analytics.clicked", code: 10160, status: 400 }
]

export const statusOf = (endpoint: Endpoint | undefined, code: number): ReadonlyArray<number> => {
  const own = isErrorCode(code) ? [ErrorCatalogue[code].status] : []
  const extra = STATUS_OVERRIDES.filter((o) => o.code === code && o.endpoint === endpoint?.id).map((o) => o.status)
  return [...own, ...extra]
}

/** The error codes of an answer (after `checkAnswer`). */
export const codesOf = (answer: Answer): ReadonlyArray<number> => {
  const parsed = parseJson(answer.text)
  const errors = parsed.ok ? at(parsed.value, "errors") : undefined
  return Array.isArray(errors) ? errors.map((error) => Number(at(error, "code"))) : []
}

/**
 * The checks every answer passes: a documented status and never a 500; 503 only from the login hashing
 * queue (the rate limit is lifted and the database is up); a JSON body of exactly
 * `{errors: [{code, message}, ...]}` (plus `success: 0` on logins) whose codes are in the catalogue with
 * the answer's status; nothing a framework would add. `endpoint` is undefined for a path no endpoint has.
 */
export const checkAnswer = (endpoint: Endpoint | undefined, request: FuzzRequest, answer: Answer) => {
  const context = `${describeRequest(request)}\n  -> ${answer.status} ${answer.contentType} ${answer.text.slice(0, 500)}`
  expect(answer.status, context).not.toBe(500)
  const documented = endpoint?.documented ?? new Set([404])
  // A wrong method or an unknown path under a known prefix is an unknown route: 404 10151.
  expect([...documented, 404], context).toContain(answer.status)
  expect(answer.text, context).not.toMatch(/HttpApiDecodeError|ParseError|SqlError|RequestError|RouteNotFound|\n\s+at /)
  if (request.method === "HEAD") return
  if (answer.status < 300) {
    if (answer.contentType.startsWith("application/json")) {
      const parsed = parseJson(answer.text)
      expect(parsed.ok, context).toBe(true)
      if (parsed.ok) expect(frameworkKeys(parsed.value), context).toEqual([])
    }
    return
  }
  expect(answer.contentType, context).toMatch(/^application\/json/)
  const parsed = parseJson(answer.text)
  expect(parsed.ok, context).toBe(true)
  if (!parsed.ok) return
  const body = parsed.value
  expect(typeof body === "object" && body !== null && !Array.isArray(body), context).toBe(true)
  const keys = Object.keys(body as object).sort()
  if (endpoint !== undefined && isLogin(endpoint) && keys.includes("success")) {
    expect(keys, context).toEqual(["errors", "success"])
    expect(at(body, "success"), context).toBe(0)
  } else {
    expect(keys, context).toEqual(["errors"])
  }
  const errors = at(body, "errors")
  expect(Array.isArray(errors) && errors.length > 0, context).toBe(true)
  if (!Array.isArray(errors)) return
  for (const error of errors) {
    expect(typeof error === "object" && error !== null ? Object.keys(error).sort() : [], context).toEqual(["code", "message"])
    const code = at(error, "code")
    expect(Number.isInteger(code), context).toBe(true)
    expect(typeof at(error, "message"), context).toBe("string")
    expect(isErrorCode(Number(code)), `${context}\n  code ${String(code)} is not in the catalogue`).toBe(true)
    expect(statusOf(endpoint, Number(code)), `${context}\n  code ${String(code)} has another status`).toContain(answer.status)
  }
  if (answer.status === 503) {
    expect(endpoint !== undefined && isLogin(endpoint), context).toBe(true)
    expect(codesOf(answer), context).toEqual(errors.map(() => 10901))
  }
  expect(frameworkKeys(body), context).toEqual([])
}
