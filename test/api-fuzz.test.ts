/**
 * Fuzzing of the whole API (issue "Reliability"): every endpoint of the contract (`src/Api`), found by
 * reflection, under /api/v4 and /api/v3, with hostile path ids, query strings, bodies, content types,
 * methods and headers. Every answer must be a documented status (never a 500) and, unless a success,
 * exactly `{errors: [{code, message}, ...]}` of catalogue codes of that status; refused writes must
 * leave everything as it was.
 *
 * The fast-check seed is random on each run (fast-check prints it with a counterexample); set
 * FUZZ_SEED to replay one.
 */
import { HttpApi } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, FastCheck as fc, Layer, Option, Runtime, SchemaAST } from "effect"
import { request as httpRequest } from "node:http"
import { Api } from "../src/Api/Api.ts"
import { Authentication } from "../src/Api/Authentication.ts"
import { ErrorCatalogue, isErrorCode } from "../src/Domain/ErrorCatalogue.ts"
import { routeLabeller } from "../src/Http/RouteLabels.ts"
import { LoginThrottle } from "../src/Services/LoginThrottle.ts"
import { answering, newDomain, newLink, uniqueDomainName } from "./support/Fixtures.ts"
import { at, call, newUser, numberAt, PASSWORD, type TestUser } from "./support/Http.ts"
import { BaseUrl, TestServer } from "./support/TestServer.ts"

// ---------------------------------------------------------------------------------------------------
// The contract, by reflection

type BodyKind = "none" | "object" | "array"

interface Endpoint {
  /** `group.name`, e.g. `links.create`. */
  readonly id: string
  readonly method: string
  /** The path template under version 4, e.g. `/api/v4/:domain_id/links`. */
  readonly path: string
  readonly params: ReadonlyArray<string>
  readonly query: ReadonlyArray<string>
  readonly body: BodyKind
  readonly bodyFields: ReadonlyArray<string>
  readonly authenticated: boolean
  /** Every status the contract documents for it (successes and errors). */
  readonly documented: ReadonlySet<number>
  /** Served under /api/v4 and /api/v3 (the operational endpoints are top level only). */
  readonly versioned: boolean
}

/** The property names of a struct schema (through refinements and transformations), or "array". */
const shapeOf = (ast: SchemaAST.AST): ReadonlyArray<string> | "array" | undefined => {
  switch (ast._tag) {
    case "TypeLiteral":
      return ast.propertySignatures.map((signature) => String(signature.name))
    case "TupleType":
      return "array"
    case "Refinement":
      return shapeOf(ast.from)
    case "Transformation":
      return shapeOf(ast.from)
    case "Suspend":
      return shapeOf(ast.f())
    default:
      return undefined
  }
}

const namesOf = (schema: Option.Option<{ readonly ast: SchemaAST.AST }>): ReadonlyArray<string> =>
  Option.match(schema, {
    onNone: () => [],
    onSome: (s) => {
      const shape = shapeOf(s.ast)
      return shape === undefined || shape === "array" ? [] : shape
    }
  })

const reflectEndpoints = (): ReadonlyArray<Endpoint> => {
  const found: Array<Endpoint> = []
  HttpApi.reflect(Api, {
    onGroup: () => undefined,
    onEndpoint: ({ group, endpoint, middleware, successes, errors }) => {
      const payload = endpoint.payloadSchema
      const shape = Option.match(payload, { onNone: () => undefined, onSome: (s) => shapeOf(s.ast) })
      found.push({
        id: `${group.identifier}.${endpoint.name}`,
        method: endpoint.method,
        path: endpoint.path,
        params: endpoint.path.split("/").filter((segment) => segment.startsWith(":")).map((segment) => segment.slice(1)),
        query: namesOf(endpoint.urlParamsSchema),
        body: Option.isNone(payload) ? "none" : shape === "array" ? "array" : "object",
        bodyFields: shape === undefined || shape === "array" ? [] : shape,
        authenticated: Array.from(middleware, (tag) => tag.key).includes(Authentication.key),
        documented: new Set([...successes.keys(), ...errors.keys()]),
        versioned: endpoint.path.startsWith("/api/v4/")
      })
    }
  })
  return found
}

const ENDPOINTS = reflectEndpoints()

/** The endpoint template a request reaches, or "unmatched" (the service's own labeller, built from the contract). */
const routeOf = routeLabeller(Api)
const VERSIONS = ["/api/v4", "/api/v3"] as const
type Version = (typeof VERSIONS)[number] | ""

/** Every endpoint once per version it is served under. */
const ROUTES: ReadonlyArray<readonly [Endpoint, Version]> = ENDPOINTS.flatMap((endpoint): Array<readonly [Endpoint, Version]> =>
  endpoint.versioned ? VERSIONS.map((version) => [endpoint, version] as const) : [[endpoint, ""]]
)

const isLogin = (endpoint: Endpoint) => endpoint.id === "auth.validateLogin" || endpoint.id === "auth.accessToken"

// ---------------------------------------------------------------------------------------------------
// Fixtures, made once for the file

interface Fixtures {
  /** Account admin of account A (enterprise): the caller of most requests. */
  readonly owner: TestUser
  /** A member of account A. */
  readonly member: TestUser
  /** Account admin of an account on the free plan. */
  readonly free: TestUser
  /** Account admin of account B. */
  readonly other: TestUser
  readonly domainA: number
  readonly linkA: number
  readonly tagA: number
  readonly domainB: number
  readonly linkB: number
  /** A local page answering 200, so that 404 checks of long URLs are quick and certain. */
  readonly landing: string
  /** Account admin of account S, whose state the "refused writes" test watches. */
  readonly state: TestUser
  readonly domainS: number
  readonly linkS: number
}

class Fuzz extends Context.Tag("test/ApiFuzz")<Fuzz, Fixtures>() {}

const fixtures = Layer.scoped(
  Fuzz,
  Effect.gen(function* () {
    const landing = (yield* answering(200)).url
    const owner = yield* newUser()
    const member = yield* newUser({ accountId: owner.accountId, role: "member" })
    const free = yield* newUser({ plan: "free" })
    const other = yield* newUser()
    const state = yield* newUser()
    const domainA = yield* newDomain(owner)
    const linkA = yield* newLink(owner, domainA, { url: landing, alias: "fuzzed", notes: "kept", tags: [{ name: "promo", shared: true }] })
    const tags = yield* call("GET", `/api/v4/tags?domain_id=${domainA}`, { token: owner.token })
    const domainB = yield* newDomain(other)
    const linkB = yield* newLink(other, domainB, { url: landing, alias: "theirs" })
    const domainS = yield* newDomain(state)
    const linkS = yield* newLink(state, domainS, { url: landing, alias: "watched", notes: "unchanged" })
    return {
      owner,
      member,
      free,
      other,
      domainA,
      linkA,
      tagA: numberAt(tags.body, "objects", 0, "id"),
      domainB,
      linkB,
      landing,
      state,
      domainS,
      linkS
    } satisfies Fixtures
  })
)

// ---------------------------------------------------------------------------------------------------
// Requests

interface FuzzRequest {
  readonly method: string
  /** Path and query, as sent (already encoded). */
  readonly path: string
  readonly headers: Record<string, string>
  /** undefined: no body at all. */
  readonly body?: string
  /** Send the body chunked (no Content-Length). */
  readonly chunked?: boolean
}

interface Answer {
  readonly status: number
  readonly contentType: string
  readonly text: string
}

const describeRequest = (request: FuzzRequest) => {
  const body = request.body === undefined ? "" : ` body(${request.body.length})=${request.body.slice(0, 200)}`
  return `${request.method} ${request.path.slice(0, 300)} headers=${JSON.stringify(request.headers).slice(0, 300)}${body}`
}

/**
 * Sends one request over its own connection, with any method, Host, header or body, and the path
 * exactly as given (a URL object would resolve "..", "%2E%2E" and "\\" before sending).
 */
const send = (request: FuzzRequest) =>
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

// ---------------------------------------------------------------------------------------------------
// What every answer must look like

const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/** Keys a framework body would carry; never part of ours. */
const FRAMEWORK_KEYS = new Set(["_tag", "issues", "_id", "stack"])

const frameworkKeys = (value: unknown, depth = 0): ReadonlyArray<string> => {
  if (depth > 8 || typeof value !== "object" || value === null) return []
  if (Array.isArray(value)) return value.slice(0, 60).flatMap((item) => frameworkKeys(item, depth + 1))
  return Object.entries(value).flatMap(([key, item]) => [
    ...(FRAMEWORK_KEYS.has(key) ? [key] : []),
    ...frameworkKeys(item, depth + 1)
  ])
}

/** Catalogue codes answered with another status than their own, where the contract says so. */
const STATUS_OVERRIDES: ReadonlyArray<{ readonly endpoint: string; readonly code: number; readonly status: number }> = [
  // CONTRACT §5: a non-numeric domain on E4 is 400 + 10101.
  { endpoint: "links.create", code: 10101, status: 400 },
  // DECISIONS: an id of a domain outside the caller's account on T1, T2, E15 is 404 with their own code.
  { endpoint: "tags.listTags", code: 10301, status: 404 },
  { endpoint: "tags.createTag", code: 10301, status: 404 },
  { endpoint: "tags.listUtmTemplates", code: 10201, status: 404 }
]

const statusOf = (endpoint: Endpoint | undefined, code: number): ReadonlyArray<number> => {
  const own = isErrorCode(code) ? [ErrorCatalogue[code].status] : []
  const extra = STATUS_OVERRIDES.filter((o) => o.code === code && o.endpoint === endpoint?.id).map((o) => o.status)
  return [...own, ...extra]
}

/** The error codes of an answer (after `checkAnswer`). */
const codesOf = (answer: Answer): ReadonlyArray<number> => {
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
const checkAnswer = (endpoint: Endpoint | undefined, request: FuzzRequest, answer: Answer) => {
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

// ---------------------------------------------------------------------------------------------------
// Valid requests, to mutate

const HOME = "https://home.example/"

let tagSerial = 0

/** A valid body for each endpoint that takes one; a test fails if the contract gains one not listed. */
const validBody = (endpoint: Endpoint, f: Fixtures, user: TestUser): unknown => {
  switch (endpoint.id) {
    case "auth.validateLogin":
    case "auth.accessToken":
      return { email: user.email, password: PASSWORD }
    case "domains.create":
      return { domain: uniqueDomainName("fz") }
    case "domains.update":
      return { op: "replace", path: "homepage", value: HOME }
    case "links.validate":
      return { url: "https://example.com/page" }
    case "links.create":
      return { url: f.landing }
    case "links.update":
      return [{ op: "replace", path: "/notes", value: "kept" }]
    case "tags.createTag":
      return { domain_id: f.domainA, name: `tag${++tagSerial}` }
    default:
      throw new Error(`no valid body known for ${endpoint.id}: add one`)
  }
}

/** Valid values of path and query parameters, for the owner of account A. */
const validParam = (name: string, f: Fixtures): string | undefined => {
  switch (name) {
    case "domain_id":
      return String(f.domainA)
    case "link_id":
      return String(f.linkA)
    case "alias":
      return "fuzzed"
    default:
      return undefined
  }
}

/** Query parameters an endpoint needs: the ones the contract makes required. */
const REQUIRED_QUERY: Readonly<Record<string, ReadonlyArray<string>>> = {
  "links.byAlias": ["alias"],
  "tags.listTags": ["domain_id"],
  "tags.listUtmTemplates": ["domain_id"]
}

const fillPath = (template: string, values: Readonly<Record<string, string>>) =>
  template.replace(/:([a-z_]+)/g, (_, name: string) => values[name] ?? "")

const versioned = (endpoint: Endpoint, version: Version) =>
  version === "" || version === "/api/v4" ? endpoint.path : `${version}${endpoint.path.slice("/api/v4".length)}`

/** The valid request of an endpoint, with `changes` applied. */
const baseline = (
  endpoint: Endpoint,
  version: Version,
  f: Fixtures,
  changes: {
    readonly params?: Readonly<Record<string, string>>
    readonly query?: string
    readonly token?: string | undefined
    readonly method?: string
    readonly body?: string | undefined
    readonly contentType?: string | undefined
    readonly headers?: Readonly<Record<string, string>>
    readonly chunked?: boolean
  } = {}
): FuzzRequest => {
  const params = Object.fromEntries(endpoint.params.map((name) => [name, changes.params?.[name] ?? validParam(name, f) ?? "1"]))
  const required = (REQUIRED_QUERY[endpoint.id] ?? []).map((name) => `${name}=${validParam(name, f) ?? ""}`).join("&")
  const query = changes.query ?? required
  const path = `${fillPath(versioned(endpoint, version), params)}${query === "" ? "" : `?${query}`}`
  const token = "token" in changes ? changes.token : endpoint.authenticated ? f.owner.token : undefined
  const body =
    "body" in changes ? changes.body : endpoint.body === "none" ? undefined : JSON.stringify(validBody(endpoint, f, f.owner))
  const contentType = "contentType" in changes ? changes.contentType : body === undefined ? undefined : "application/json"
  const headers: Record<string, string> = {
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    ...(contentType === undefined ? {} : { "content-type": contentType }),
    ...changes.headers
  }
  return {
    method: changes.method ?? endpoint.method,
    path,
    headers,
    ...(body === undefined ? {} : { body }),
    ...(changes.chunked === true ? { chunked: true } : {})
  }
}

// ---------------------------------------------------------------------------------------------------
// Arbitraries

/** Percent-encoding of any string, lone surrogates included (as U+FFFD, as a browser would send them). */
const encode = (text: string) => {
  try {
    return encodeURIComponent(text)
  } catch {
    return Array.from(Buffer.from(text, "utf8"), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("")
  }
}

const HOSTILE_TEXT = [
  "", " ", "0", "-1", "1.5", "1e308", "-0", "NaN", "Infinity", "null", "true", "[]", "{}", "\u0000", "a\u0000b", "\uD800",
  "ä", "😀", "İ", "\u202Eevil", "'; DROP TABLE links; --", "<script>alert(1)</script>", "../../etc/passwd", "a/b",
  "%2F", "%00", "%", "\r\nX-Injected: 1", "x".repeat(300), "api", "__proto__", "constructor", "9".repeat(30), "0x10",
  "all", "me", "latest", "oldest", "png", "svg", "eps", "desktop", "bot", "US", "us", "replace", "/alias", "status",
  "disabled", "homepage", "1", "2", "999999", "http://", "javascript:alert(1)", "http://127.0.0.1:1/", "\t", "\\"
] as const

const hostileText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...HOSTILE_TEXT), weight: 4 },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 2 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 12 }), weight: 1 },
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 8 }), weight: 1 },
  { arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String), weight: 1 },
  { arbitrary: fc.double({ noNaN: true }).map(String), weight: 1 }
)

/** `depth` arrays or objects inside each other. */
const nested = (depth: number, kind: "array" | "object"): unknown => {
  let value: unknown = kind === "array" ? [] : {}
  for (let i = 0; i < depth; i++) value = kind === "array" ? [value] : { a: value }
  return value
}

/** Any JSON value a client might send in a field: wrong types, nesting, huge strings and numbers. */
const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 2, [], {}, [null], [[]], { "": 1 }), weight: 3 },
  { arbitrary: hostileText, weight: 4 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
  { arbitrary: fc.array(hostileText, { maxLength: 5 }), weight: 1 },
  { arbitrary: fc.dictionary(hostileText, hostileText, { maxKeys: 4 }), weight: 1 },
  { arbitrary: fc.tuple(fc.integer({ min: 20, max: 3000 }), fc.constantFrom("array" as const, "object" as const)).map(([d, k]) => nested(d, k)), weight: 1 },
  { arbitrary: fc.integer({ min: 1000, max: 70_000 }).map((n) => "x".repeat(n)), weight: 1 }
)

/** Whole bodies that are not JSON, or JSON that no parser should like. */
const INVALID_JSON = [
  "", " ", "{", "}", "[", "{\"url\":", "{'url':'x'}", "{url: 1}", "undefined", "NaN", "[1,]", "{\"a\":1,}", "\uFEFF{}",
  "\u0000", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\u0000\"}", "1e99999", "-", "tru", "nul", "\"unterminated", "{\"a\":1}{\"b\":2}",
  "[".repeat(30_000) + "]".repeat(30_000), "{\"a\":".repeat(8_000) + "1" + "}".repeat(8_000), "\xff\xfe", "<xml/>", "a=1&b=2"
] as const

const CONTENT_TYPES = [
  "application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/json; charset=latin1", "text/plain",
  "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "application/octet-stream", "",
  "application/json, text/plain", "*/*", "application/vnd.api+json", "text/json"
] as const

interface BodyCase {
  readonly body: string | undefined
  readonly contentType: string | undefined
  readonly chunked: boolean
}

/** A mutated body of the endpoint: one field wrong, a field missing, unknown fields, a wholly wrong body, or not JSON at all. */
const bodyCase = (endpoint: Endpoint, f: Fixtures): fc.Arbitrary<BodyCase> => {
  const fields = endpoint.bodyFields.length > 0 ? endpoint.bodyFields : ["op", "path", "value"]
  const base = () => validBody(endpoint, f, f.owner)
  const asObject = (value: unknown): Record<string, unknown> =>
    typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value } : {}
  /** For an array body (E12), the change applies to its first operation. */
  const edit = (change: (object: Record<string, unknown>) => void): unknown => {
    const value = base()
    if (Array.isArray(value)) {
      const first = asObject(value[0])
      change(first)
      return [first, ...value.slice(1)]
    }
    const object = asObject(value)
    change(object)
    return object
  }
  const json: fc.Arbitrary<string> = fc.oneof(
    fc.tuple(fc.constantFrom(...fields), hostileJson).map(([field, value]) => JSON.stringify(edit((o) => void (o[field] = value)))),
    fc.constantFrom(...fields).map((field) => JSON.stringify(edit((o) => void delete o[field]))),
    fc.tuple(hostileText, hostileJson).map(([field, value]) => JSON.stringify(edit((o) => void (o[field] = value)))),
    fc.dictionary(fc.constantFrom(...fields), hostileJson, { maxKeys: fields.length }).map((record) => JSON.stringify(endpoint.body === "array" ? [record] : record)),
    fc.array(fc.dictionary(fc.constantFrom(...fields), hostileJson, { maxKeys: 3 }), { maxLength: 8 }).map((ops) => JSON.stringify(ops)),
    hostileJson.map((value) => JSON.stringify(value) ?? "null"),
    fc.tuple(fc.constantFrom(...fields), fc.integer({ min: 60_000, max: 67_000 })).map(([field, n]) =>
      JSON.stringify(edit((o) => void (o[field] = "y".repeat(n))))
    )
  )
  const text = fc.oneof({ arbitrary: json, weight: 6 }, { arbitrary: fc.constantFrom<string>(...INVALID_JSON), weight: 2 })
  const type = fc.oneof(
    { arbitrary: fc.constant<string | undefined>("application/json"), weight: 6 },
    { arbitrary: fc.constantFrom<string | undefined>(...CONTENT_TYPES, undefined), weight: 2 }
  )
  return fc.record({
    body: fc.option(text, { nil: undefined, freq: 20 }),
    contentType: type,
    chunked: fc.boolean()
  })
}

const HOSTILE_IDS = [
  "0", "-1", "-0", "1.5", "1e3", "1e400", "9007199254740992", "9007199254740993", "99999999999999999999999999", "abc", "NaN",
  "Infinity", "null", "undefined", "true", "%20", "%2F", "a%2Fb", "%00", "%C3%A4", "%F0%9F%98%80", "%E2%80%AE1", "..", ".",
  "%2E%2E", "1;2", "1,2", "[1]", "%7B%7D", "'1'", "%22", "\\", "~", "$", "*", "1%23", "%FF", "%"
] as const

/** Spellings of a real id that are not the canonical positive integer (CONTRACT §2: a 404). */
const misspelt = (id: number) => [`${id}%20`, `+${id}`, `0${id}`, `${id}.0`, `${id}e0`, `0x${id.toString(16)}`, `${id}%0A`, `%20${id}`]

/** Ids that name nothing: never a canonical id small enough to exist in this test's database. */
const hostileId: fc.Arbitrary<string> = fc
  .oneof(
    { arbitrary: fc.constantFrom(...HOSTILE_IDS), weight: 4 },
    { arbitrary: fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String), weight: 2 },
    { arbitrary: fc.integer({ min: 100_000, max: 2_000_000_000 }).map(String), weight: 1 },
    { arbitrary: fc.string({ minLength: 1, maxLength: 12 }).map(encode), weight: 2 },
    { arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 6 }).map(encode), weight: 1 }
  )
  .filter((id) => !/^[1-9][0-9]{0,4}$/.test(id))

/** Query strings of known names with wrong values, unknown names, repeated names and broken encoding. */
const queryString = (endpoint: Endpoint): fc.Arbitrary<string> => {
  const known = endpoint.query.length > 0 ? endpoint.query : ["page"]
  const name = fc.oneof(
    { arbitrary: fc.constantFrom(...known), weight: 5 },
    { arbitrary: fc.constantFrom("unknown", "", "__proto__", "constructor", "page[]", "a[b]", "PAGE", "Domain_Id"), weight: 1 },
    { arbitrary: fc.string({ maxLength: 8 }), weight: 1 }
  )
  const pair = fc.tuple(name, hostileText).map(([n, v]) => `${encode(n)}=${encode(v)}`)
  const raw = fc.constantFrom("%", "%zz", "%E0%A4%A", "a=%", "=1", "&&", "a", "a==b", "%00=%00", "page=1&page=2", "page=%FF")
  return fc
    .array(fc.oneof({ arbitrary: pair, weight: 5 }, { arbitrary: raw, weight: 1 }), { minLength: 1, maxLength: 6 })
    .map((parts) => parts.join("&"))
}

type AuthVariant =
  | "owner" | "none" | "empty" | "scheme only" | "garbage" | "basic" | "flipped" | "suffixed" | "lower-case scheme"
  | "no scheme" | "long" | "other account" | "member" | "free plan" | "twice"

const AUTH_VARIANTS: ReadonlyArray<AuthVariant> = [
  "owner", "none", "empty", "scheme only", "garbage", "basic", "flipped", "suffixed", "lower-case scheme", "no scheme", "long",
  "other account", "member", "free plan", "twice"
]

/** Variants that are certainly not a valid token: 401 10000 on every authenticated endpoint. */
const INVALID_AUTH: ReadonlySet<AuthVariant> = new Set(["none", "empty", "scheme only", "garbage", "basic", "flipped", "suffixed", "no scheme", "long"])

const authorization = (variant: AuthVariant, f: Fixtures): string | undefined => {
  const flip = (token: string) => `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`
  switch (variant) {
    case "owner":
      return `Bearer ${f.owner.token}`
    case "none":
      return undefined
    case "empty":
      return ""
    case "scheme only":
      return "Bearer"
    case "garbage":
      return "Bearer \u00ff\u00fe not a token"
    case "basic":
      return `Basic ${Buffer.from(`${f.owner.email}:${PASSWORD}`).toString("base64")}`
    case "flipped":
      return `Bearer ${flip(f.owner.token)}`
    case "suffixed":
      return `Bearer ${f.owner.token}x`
    case "lower-case scheme":
      return `bearer ${f.owner.token}`
    case "no scheme":
      return f.owner.token
    case "long":
      return `Bearer ${"a".repeat(8000)}`
    case "other account":
      return `Bearer ${f.other.token}`
    case "member":
      return `Bearer ${f.member.token}`
    case "free plan":
      return `Bearer ${f.free.token}`
    case "twice":
      return `Bearer ${f.owner.token}, Bearer ${f.other.token}`
  }
}

const ODD_HOSTS = ["", "a b", "[", "x:y:z", "ünï.example", "%", "localhost:99999", "h".repeat(300), "[::1]:80", "example.com:", "@evil"] as const

// ---------------------------------------------------------------------------------------------------
// Running properties inside the test's Effect

const seed = process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED) }

/**
 * Runs per property, for about 40 s on the embedded database on 2 cores: per endpoint, version and
 * path parameter (ids), per endpoint and version (query strings, bodies), and in all (methods, state).
 */
const RUNS = { ids: 10, query: 10, bodies: 50, loginBodies: 8, methods: 300, state: 200 } as const

/** fc.assert of an async property whose body is an Effect run on the test's runtime. */
const property = <T, R>(arbitrary: fc.Arbitrary<T>, numRuns: number, body: (value: T) => Effect.Effect<void, never, R>) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<R>()
    const run = Runtime.runPromise(runtime)
    yield* Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(arbitrary, (value) => run(body(value))),
        { numRuns, endOnFailure: true, ...seed }
      )
    )
  })

/** Logins verify an argon2id hash; the growing delays per e-mail (tested elsewhere) are reset after each. */
const forgetLoginFailures = (request: FuzzRequest) =>
  Effect.gen(function* () {
    const throttle = yield* LoginThrottle
    const parsed = request.body === undefined ? undefined : parseJson(request.body)
    const email = parsed !== undefined && parsed.ok ? at(parsed.value, "email") : undefined
    yield* throttle.succeeded("")
    if (typeof email === "string") yield* throttle.succeeded(email)
  })

const exchange = (endpoint: Endpoint | undefined, request: FuzzRequest) =>
  Effect.gen(function* () {
    const answer = yield* send(request)
    if (endpoint !== undefined && isLogin(endpoint)) yield* forgetLoginFailures(request)
    checkAnswer(endpoint, request, answer)
    return answer
  })

// ---------------------------------------------------------------------------------------------------

describe("API fuzzing: every endpoint of v4 and v3 under hostile input", () => {
  layer(TestServer({ URL_CHECK_ALLOW_PRIVATE: "true" }), { excludeTestServices: true, timeout: "120 seconds" })((it) => {
    it.layer(fixtures)((it) => {
      it.effect("the contract has the endpoints this file knows how to call", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          expect(ENDPOINTS.length).toBeGreaterThanOrEqual(30)
          for (const endpoint of ENDPOINTS) {
            if (endpoint.body !== "none") expect(() => validBody(endpoint, f, f.owner), endpoint.id).not.toThrow()
            for (const name of endpoint.params) expect(validParam(name, f), `${endpoint.id} :${name}`).toBeDefined()
          }
          // Each valid request is answered 200, so that every refusal below is the mutation's doing.
          for (const [endpoint, version] of ROUTES) {
            const request = baseline(endpoint, version, f)
            const answer = yield* exchange(endpoint, request)
            expect(answer.status, `${describeRequest(request)} -> ${answer.text.slice(0, 300)}`).toBe(200)
          }
        })
      )

      it.effect("hostile and misspelt path ids: 404 (400 10101 for E4's domain), never a 500", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          const withIds = ROUTES.filter(([endpoint]) => endpoint.params.length > 0)
          expect(withIds.length).toBeGreaterThan(20)
          const foreign: Readonly<Record<string, string>> = { domain_id: String(f.domainB), link_id: String(f.linkB) }
          for (const [endpoint, version] of withIds) {
            const checkId = (name: string, id: string) =>
              Effect.gen(function* () {
                const request = baseline(endpoint, version, f, { params: { [name]: id } })
                const answer = yield* exchange(endpoint, request)
                const context = `${describeRequest(request)} -> ${answer.status} ${answer.text.slice(0, 300)}`
                // The router ends a path at ";" as at "?" (`/links/1;x` is link 1): only the answer's form is checked.
                if (id.includes(";")) return
                const allowed = endpoint.id === "links.create" && name === "domain_id" ? [400, 404] : [404]
                expect(allowed, context).toContain(answer.status)
                expect(codesOf(answer).filter((code) => ![10101, 10150, 10151].includes(code)), context).toEqual([])
              })
            for (const name of endpoint.params) {
              const own = Number(validParam(name, f))
              for (const id of [...misspelt(own), foreign[name]!, "999999999"]) yield* checkId(name, id)
              // An empty id changes the shape of the path: it may name another endpoint (E3 for "/domains/").
              yield* exchange(endpoint, baseline(endpoint, version, f, { params: { [name]: "" } }))
              yield* property(hostileId, RUNS.ids, (id) => checkId(name, id))
            }
          }
        }),
        120_000
      )

      it.effect("random query strings on every endpoint: documented statuses and catalogue bodies", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          for (const [endpoint, version] of ROUTES) {
            if (isLogin(endpoint)) continue // the bodies test covers logins; each one costs a password hash
            const required = REQUIRED_QUERY[endpoint.id] ?? []
            const prefix = required.map((name) => `${name}=${validParam(name, f) ?? ""}`)
            yield* property(fc.tuple(queryString(endpoint), fc.boolean()), RUNS.query, ([query, keepRequired]) =>
              Effect.asVoid(
                exchange(endpoint, baseline(endpoint, version, f, { query: [...(keepRequired ? prefix : []), query].join("&") }))
              )
            )
          }
        }),
        120_000
      )

      it.effect("random, mutated and invalid bodies and content types on every endpoint that takes a body", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          const withBodies = ROUTES.filter(([endpoint]) => endpoint.body !== "none")
          expect(withBodies.map(([endpoint]) => endpoint.id).sort()).toEqual(
            expect.arrayContaining(["auth.accessToken", "domains.create", "domains.update", "links.create", "links.update", "links.validate", "tags.createTag"])
          )
          for (const [endpoint, version] of withBodies) {
            const runs = isLogin(endpoint) ? RUNS.loginBodies : RUNS.bodies
            yield* property(bodyCase(endpoint, f), runs, (c) =>
              Effect.gen(function* () {
                const request = baseline(endpoint, version, f, { body: c.body, contentType: c.contentType, chunked: c.chunked })
                const answer = yield* exchange(endpoint, request)
                const size = request.body === undefined ? 0 : Buffer.byteLength(request.body)
                const context = `${describeRequest(request)} -> ${answer.status} ${answer.text.slice(0, 300)}`
                if (size > 64 * 1024) expect([answer.status, codesOf(answer)], context).toEqual([413, [10152]])
                else expect(answer.status, context).not.toBe(413)
                // CONTRACT §1: a JSON body that does not parse is a 400 10153. (A UTF-8 byte order mark is
                // dropped when the body is decoded, as RFC 8259 lets parsers do; an empty body reads as null,
                // a body of the wrong shape, answered with the endpoint's own code.)
                const json = c.contentType?.toLowerCase().includes("application/json") === true
                const text = request.body?.replace(/^\uFEFF/, "")
                if (json && size <= 64 * 1024 && text !== undefined && text !== "" && !parseJson(text).ok) {
                  expect([answer.status, codesOf(answer)], context).toEqual([400, [10153]])
                }
              })
            )
          }
        }),
        120_000
      )

      it.effect("bodies where none is expected, wrong methods and odd Host headers", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          const methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"] as const
          const arbitrary = fc.record({
            route: fc.constantFrom(...ROUTES.filter(([endpoint]) => !isLogin(endpoint))),
            method: fc.constantFrom(...methods),
            host: fc.option(fc.constantFrom(...ODD_HOSTS), { nil: undefined }),
            body: fc.option(fc.constantFrom("{}", "[]", "null", "{\"a\":1}", "not json"), { nil: undefined }),
            proto: fc.option(fc.constantFrom("https", "http", "gopher", ""), { nil: undefined })
          })
          yield* property(arbitrary, RUNS.methods, ({ route: [endpoint, version], method, host, body, proto }) =>
            Effect.gen(function* () {
              const hasBody = body !== undefined && method !== "GET" && method !== "HEAD"
              const request = baseline(endpoint, version, f, {
                method,
                body: hasBody ? body : method === endpoint.method && endpoint.body !== "none" ? JSON.stringify(validBody(endpoint, f, f.owner)) : undefined,
                contentType: "application/json",
                headers: { ...(host === undefined ? {} : { host }), ...(proto === undefined ? {} : { "x-forwarded-proto": proto }) }
              })
              const answer = yield* exchange(endpoint, request)
              const context = `${describeRequest(request)} -> ${answer.status} ${answer.text.slice(0, 300)}`
              // A method no endpoint of this path has is an unknown route (DECISIONS "Errors").
              const v4Path = request.path.split("?")[0]!.replace(/^\/api\/v3\//, "/api/v4/")
              const routed = [method, ...(method === "HEAD" ? ["GET"] : [])].some((m) => routeOf(m, v4Path) !== "unmatched")
              if (!routed) {
                expect([answer.status, method === "HEAD" ? [10151] : codesOf(answer)], context).toEqual([404, [10151]])
              }
            })
          )
        }),
        120_000
      )

      it.effect("missing, garbled and foreign Authorization: 401 10000, or 404 for another account's domain and link ids", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          /** Endpoints that name one of account A's resources in their path, query or body. */
          const namesResource = (endpoint: Endpoint) =>
            endpoint.params.length > 0 || (REQUIRED_QUERY[endpoint.id] ?? []).length > 0 || endpoint.id === "tags.createTag"
          const notFoundCodes = [10101, 10150, 10201, 10301]
          for (const [endpoint, version] of ROUTES) {
            if (!endpoint.authenticated) continue
            for (const variant of AUTH_VARIANTS) {
              const header = authorization(variant, f)
              // E9 with the same name twice would be refused as taken: a fresh body each time.
              const request = baseline(endpoint, version, f, { token: undefined, headers: header === undefined ? {} : { authorization: header } })
              const answer = yield* exchange(endpoint, request)
              const context = `${variant}: ${describeRequest(request)} -> ${answer.status} ${answer.text.slice(0, 300)}`
              if (INVALID_AUTH.has(variant)) {
                expect([answer.status, codesOf(answer)], context).toEqual([401, [10000]])
              } else if (variant === "other account" && namesResource(endpoint)) {
                expect(answer.status, context).toBe(404)
                expect(codesOf(answer).every((code) => notFoundCodes.includes(code)), context).toBe(true)
              } else if (variant === "free plan" && endpoint.id.startsWith("analytics.")) {
                expect([answer.status, codesOf(answer)], context).toEqual([403, [10504]])
              } else {
                expect([200, 401, 403, 404], context).toContain(answer.status)
              }
            }
          }
        }),
        120_000
      )

      it.effect("refused link creates and updates, domain creates and updates and tag creates change nothing", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          const sql = yield* SqlClient.SqlClient
          const s = f.state
          const d = `/api/v4/${f.domainS}`
          const snapshot = Effect.gen(function* () {
            const read = (path: string) => Effect.map(call("GET", path, { token: s.token }), (reply) => ({ path, status: reply.status, body: reply.body }))
            const counts = yield* sql<{ links: number; domains: number; tags: number; link_tags: number; users: number }>`
              SELECT (SELECT count(*) FROM links)::int AS links, (SELECT count(*) FROM domains)::int AS domains,
                     (SELECT count(*) FROM tags)::int AS tags, (SELECT count(*) FROM link_tags)::int AS link_tags,
                     (SELECT count(*) FROM users)::int AS users`
            return [
              counts[0],
              yield* read("/api/v4/domains"),
              yield* read(`/api/v4/domains/${f.domainS}`),
              yield* read(`${d}/links?users=all`),
              yield* read(`${d}/links/${f.linkS}`),
              yield* read(`${d}/links/exists?alias=watched`),
              yield* read(`/api/v4/tags?domain_id=${f.domainS}`)
            ] as const
          }).pipe(Effect.orDie)
          const endpointOf = (id: string) => {
            const found = ENDPOINTS.find((endpoint) => endpoint.id === id)
            if (found === undefined) throw new Error(`no endpoint ${id}`)
            return found
          }
          const writes = ["links.create", "links.update", "domains.create", "domains.update", "tags.createTag"].map(endpointOf)
          /** Valid bodies of account S, each mutated in one way. */
          const stateFixtures: Fixtures = { ...f, owner: s, domainA: f.domainS, linkA: f.linkS }
          const arbitrary = fc
            .tuple(fc.constantFrom(...writes), fc.constantFrom(...VERSIONS), fc.nat(), fc.constantFrom<AuthVariant>("owner", "owner", "owner", "other account", "none"))
            .chain(([endpoint, version, pick, variant]) =>
              fc.record({
                endpoint: fc.constant(endpoint),
                version: fc.constant(version),
                variant: fc.constant(variant),
                body: bodyCase(endpoint, stateFixtures),
                id: fc.option(hostileId, { nil: undefined, freq: 4 }),
                pick: fc.constant(pick)
              })
            )
          let before = yield* snapshot
          let accepted = 0
          let refused = 0
          yield* property(arbitrary, RUNS.state, (c) =>
            Effect.gen(function* () {
              const header = c.variant === "owner" ? `Bearer ${s.token}` : authorization(c.variant, f)
              const param = c.endpoint.params[c.pick % Math.max(1, c.endpoint.params.length)]
              const request = baseline(c.endpoint, c.version, stateFixtures, {
                token: undefined,
                headers: header === undefined ? {} : { authorization: header },
                body: c.body.body,
                contentType: c.body.contentType,
                chunked: c.body.chunked,
                ...(c.id === undefined || param === undefined ? {} : { params: { [param]: c.id } })
              })
              const answer = yield* exchange(c.endpoint, request)
              const after = yield* snapshot
              if (answer.status === 200) {
                accepted++
                before = after
                return
              }
              refused++
              expect(after, `a refused request changed the state: ${describeRequest(request)} -> ${answer.status} ${answer.text.slice(0, 300)}`).toEqual(before)
            })
          )
          expect(refused).toBeGreaterThan(accepted)
        }),
        120_000
      )

      it.effect("the failures this fuzzer found, as fixed examples", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          const auth = { authorization: `Bearer ${f.owner.token}` }
          const json = { ...auth, "content-type": "application/json" }
          const d = f.domainA
          const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}{}${"}".repeat(depth)}`
          const deepArray = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`
          const cases: ReadonlyArray<readonly [FuzzRequest, number, ReadonlyArray<number>]> = [
            // Ids spelt other than as a positive integer were read as that integer.
            [{ method: "GET", path: `/api/v4/domains/0x${d.toString(16)}`, headers: auth }, 404, [10101]],
            [{ method: "GET", path: `/api/v4/domains/0${d}`, headers: auth }, 404, [10101]],
            [{ method: "GET", path: `/api/v3/${d}/links/${f.linkA}.0`, headers: auth }, 404, [10150]],
            // Version 3 resolved "." and ".." segments that version 4 does not.
            [{ method: "GET", path: "/api/v3/domains/.", headers: auth }, 404, [10101]],
            [{ method: "GET", path: `/api/v3/${d}/links/../clicks/daily`, headers: auth }, 404, [10150]],
            // A multipart body: 500, or no answer at all when empty.
            [{ method: "POST", path: "/api/v4/tags", headers: { ...auth, "content-type": "multipart/form-data; boundary=x" }, body: "" }, 400, [10153]],
            [{ method: "POST", path: "/api/v4/domains", headers: { ...auth, "content-type": "multipart/form-data; boundary=x" }, body: "{}" }, 400, [10153]],
            // Input nested too deeply for the decode messages (and E12's echo of a bad operation): 500.
            [{ method: "POST", path: "/api/v4/domains", headers: json, body: `[${deepObject(3000)}]` }, 400, [10153]],
            [{ method: "PATCH", path: `/api/v4/${d}/links/${f.linkA}`, headers: json, body: `[${deepArray(20_000)}]` }, 400, [10153]],
            [{ method: "PATCH", path: `/api/v4/${d}/links/${f.linkA}`, headers: json, body: `[{"op":${deepArray(20_000)},"path":"/notes"}]` }, 400, [10153]],
            // A NUL character reaching PostgreSQL: 500.
            [{ method: "GET", path: `/api/v4/${d}/links?keyword=%00`, headers: auth }, 400, [10153]],
            [{ method: "GET", path: `/api/v4/${d}/links?tag=a%00`, headers: auth }, 400, [10153]],
            [{ method: "GET", path: `/api/v4/${d}/links/exists?alias=%00`, headers: auth }, 400, [10153]],
            [{ method: "GET", path: `/api/v4/tags?domain_id=${d}&search=%00`, headers: auth }, 400, [10153]],
            [{ method: "GET", path: `/api/v4/${d}/clicks/city?keyword=%00&city=%00`, headers: auth }, 400, [10153]],
            [{ method: "POST", path: "/api/v4/tags", headers: json, body: JSON.stringify({ domain_id: d, name: "nul", notes: "\u0000" }) }, 400, [10153]],
            [{ method: "POST", path: "/api/v4/validate_login", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "a\u0000@example.com", password: PASSWORD }) }, 401, [10001]],
            // A Host header that is no URL authority on a paginated report: 500.
            [{ method: "GET", path: `/api/v4/${d}/clicks/daily`, headers: { ...auth, host: "a b" } }, 200, []]
          ]
          for (const [request, status, codes] of cases) {
            const endpoint = ENDPOINTS.find((e) => routeOf(request.method, request.path.split("?")[0]!.replace("/api/v3/", "/api/v4/")) === e.path)
            const answer = yield* exchange(endpoint, request)
            expect([answer.status, codesOf(answer)], describeRequest(request)).toEqual([status, codes])
          }
          const report = parseJson((yield* send({ method: "GET", path: `/api/v4/${d}/clicks/daily`, headers: { ...auth, host: "a b" } })).text)
          expect(report.ok ? at(report.value, "links", "first") : undefined).toBe(`http://localhost/api/v4/${d}/clicks/daily?page=1`)
        })
      )
    })
  })
})
