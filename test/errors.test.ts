import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { ErrorCatalogue } from "../src/Platform/ErrorCatalogue.ts"
import { at, call, codes, newUser, numberAt, type Reply } from "./support/Http.ts"
import { TestServer } from "./support/TestServer.ts"

const SPEC_CODES = [
  10000, 10001, 10100, 10101, 10102, 10103, 10104, 10105, 10106, 10107, 10108, 10109, 10110, 10111, 10112, 10113, 10114,
  10115, 10116, 10120, 10121, 10122, 10123, 10130, 10131, 10132, 10133, 10134, 10135, 10140, 10141, 10142, 10143, 10144,
  10200, 10201, 10300, 10301, 10302, 10303, 10304, 10305, 10306, 10307, 10308
]
const OWN_CODES = [
  10003, 10150, 10151, 10152, 10154, 10160, 10400, 10401, 10402, 10403, 10404, 10405, 10406, 10500, 10501, 10502, 10503, 10504, 10505,
  10506, 10507, 10600, 10900, 10999
]

/** Text no answer may carry back: markup around a word no rule could produce on its own. */
const MARKER_TEXT = "zq-echo-marker"
const MARKER = `<b>${MARKER_TEXT}</b>`

/** A failure answer in the one documented shape: `{errors: [{code, message}, ...]}` and nothing else. */
const expectErrorBody = (reply: Reply, context: string) => {
  expect(reply.headers.get("content-type"), context).toMatch(/^application\/json/)
  const body = reply.body
  expect(Object.keys(body as object).filter((k) => k !== "success"), context).toEqual(["errors"])
  const errors = at(body, "errors")
  expect(Array.isArray(errors) && errors.length > 0, context).toBe(true)
  for (const error of errors as ReadonlyArray<unknown>) {
    expect(Object.keys(error as object).sort(), context).toEqual(["code", "message"])
    expect(Object.hasOwn(ErrorCatalogue, numberAt(error, "code")), context).toBe(true)
    expect(typeof at(error, "message"), context).toBe("string")
  }
}

describe("errors as data (E31, failure bodies)", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("E31 lists every code of the specification and of the contract with description and message", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const reply = yield* call("GET", "/api/v4/error_codes", { token: user.token })
        expect(reply.status).toBe(200)
        const objects = at(reply.body, "objects") as ReadonlyArray<unknown>
        const listed = objects.map((o) => numberAt(o, "code"))
        for (const code of [...SPEC_CODES, ...OWN_CODES]) expect(listed).toContain(code)
        expect(new Set(listed).size).toBe(listed.length)
        expect(objects.find((o) => at(o, "code") === 10116)).toEqual({
          code: 10116,
          description: "link archive on and delete on mutually exclusive",
          message: "setting both archive_on and delete_on is not allowed"
        })
        expect(objects.find((o) => at(o, "code") === 10001)).toEqual({
          code: 10001,
          description: "auth user may not be registered",
          message: "%1$s may not be registered"
        })
        for (const entry of objects) {
          expect(Object.keys(entry as object).sort()).toEqual(["code", "description", "message"])
          expect(String(at(entry, "description")).length).toBeGreaterThan(0)
        }
      })
    )

    it.effect("unknown routes and methods answer 404 10151 in the error shape", () =>
      Effect.gen(function* () {
        for (const [method, path] of [
          ["GET", "/api/v4/nothing"],
          ["DELETE", "/api/v4/domains"],
          ["PUT", "/api/v4/domains/1"],
          ["GET", "/api/v9/domains"],
          ["GET", "/definitely/not/here"]
        ] as const) {
          const reply = yield* call(method, path)
          expect(reply.status, path).toBe(404)
          expect(reply.body, path).toEqual({ errors: [{ code: 10151, message: `no route for ${method} ${path}` }] })
        }
      })
    )

    it.effect("a body that is not JSON is a 400 10153, never a framework body or a 500", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        for (const rawBody of ["{", "not json", "{\"domain\": }", "\u0000", "[1,2"]) {
          const reply = yield* call("POST", "/api/v4/domains", { token: user.token, rawBody })
          expect(reply.status, rawBody).toBe(400)
          expect(codes(reply), rawBody).toEqual([10153])
          expectErrorBody(reply, rawBody)
        }
        for (const body of [null, 5, "text", [], [{ domain: "x.example" }]]) {
          const reply = yield* call("POST", "/api/v4/domains", { token: user.token, body })
          expect(reply.status, JSON.stringify(body)).toBe(400)
          expectErrorBody(reply, JSON.stringify(body))
        }
      })
    )

    it.effect("no error answer of any endpoint repeats its input: a marker in every field, shape and query never comes back", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = numberAt(
          (yield* call("POST", "/api/v4/domains", { token: user.token, body: { domain: `echo${Date.now()}.example` } })).body,
          "objects", 0, "id"
        )
        const link = yield* call("POST", `/api/v4/${domainId}/links`, {
          token: user.token,
          body: { url: "https://example.com/echo", alias: "echo", override_404_check: 1 }
        })
        const linkId = numberAt(link.body, "objects", 0, "id")
        const document = (yield* call("GET", "/api/v4/openapi.json")).body
        const resolved = (schema: unknown): unknown => {
          const ref = at(schema, "$ref")
          return typeof ref === "string" ? at(document, ...ref.replace("#/", "").split("/")) : schema
        }
        /** Every property name declared in a request body schema, unions and nesting included. */
        const fieldsOf = (schema: unknown, depth = 0): Array<string> => {
          const node = resolved(schema)
          if (depth > 4 || typeof node !== "object" || node === null) return []
          const own = Object.keys((at(node, "properties") ?? {}) as object)
          const nested = Object.values(node).flatMap((child) =>
            Array.isArray(child) ? child.flatMap((item) => fieldsOf(item, depth + 1)) : fieldsOf(child, depth + 1)
          )
          return [...new Set([...own, ...nested])]
        }
        const values: ReadonlyArray<unknown> = [MARKER, [MARKER], { [MARKER]: MARKER }, [{ name: MARKER, shared: MARKER }], 1.5]
        const generic: ReadonlyArray<unknown> = [
          MARKER,
          [MARKER],
          { [MARKER]: MARKER },
          [{ op: MARKER, path: MARKER, value: MARKER }],
          [{ op: "replace", path: MARKER }],
          ...["/alias", "/notes", "/notify_on_click", "/url", "/delete_on", "/archive_on"].map((path) => [{ op: "replace", path, value: MARKER }]),
          ...["/alias", "/notes", "/url"].map((path) => [{ op: "replace", path, value: [MARKER] }]),
          { op: MARKER, path: MARKER, value: MARKER },
          ...["status", "homepage", "url_404"].map((path) => ({ op: "replace", path, value: MARKER })),
          { op: "replace", path: "homepage", value: { [MARKER]: 1 } }
        ]
        const fill = (template: string) =>
          template.replace("{domain_id}", String(domainId)).replace("{link_id}", String(linkId)).replace(/\{[a-z_]+\}/g, "1")
        const paths = Object.entries(at(document, "paths") as Record<string, Record<string, unknown>>)
        let checked = 0
        for (const version of ["v4", "v3"]) {
          for (const [template, operations] of paths) {
            if (!template.startsWith("/api/v4/")) continue
            const path = fill(template).replace("/api/v4/", `/api/${version}/`)
            for (const [method, operation] of Object.entries(operations)) {
              if (method === "delete") continue
              const query = ((at(operation, "parameters") ?? []) as ReadonlyArray<unknown>)
                .filter((parameter) => at(parameter, "in") === "query")
                .map((parameter) => `${String(at(parameter, "name"))}=${encodeURIComponent(MARKER)}`)
              const requests: Array<{ readonly target: string; readonly options: { rawBody?: string; body?: unknown } }> = [
                { target: query.length === 0 ? path : `${path}?${query.join("&")}`, options: {} }
              ]
              if (method !== "get") {
                // E1 and E2 repeat the e-mail they refuse (docs/decisions/0002-errors.md): no string
                // e-mail is sent to them.
                const login = /\/(validate_login|access_token)$/.test(template)
                const fields = fieldsOf(at(operation, "requestBody", "content", "application/json", "schema"))
                const bodies = [
                  ...(login ? [[MARKER], { email: [MARKER], password: MARKER }] : generic),
                  ...values.flatMap((value) => fields.filter((field) => !(login && field === "email" && typeof value === "string")).map((field) => ({ [field]: value }))),
                  ...values.filter((value) => !login || typeof value !== "string").map((value) => Object.fromEntries(fields.map((field) => [field, value])))
                ]
                requests.push(
                  { target: path, options: { rawBody: `{"${MARKER}": ${MARKER}` } },
                  ...bodies.map((body) => ({ target: path, options: { body } }))
                )
              }
              for (const { target, options } of requests) {
                const reply = yield* call(method.toUpperCase(), target, { token: user.token, ...options })
                checked++
                if (reply.status < 400) continue
                const context = `${method} ${target} ${options.rawBody ?? JSON.stringify(options.body)} -> ${reply.status} ${reply.text}`
                expect(reply.text.toLowerCase(), context).not.toContain(MARKER_TEXT)
              }
            }
          }
        }
        expect(checked).toBeGreaterThan(500)
      })
    , 120_000)

    it.effect("property: random bodies and queries get a documented answer, and refused requests change nothing", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const sql = yield* SqlClient.SqlClient
        const domainId = numberAt(
          (yield* call("POST", "/api/v4/domains", { token: admin.token, body: { domain: `prop${Date.now()}.example` } })).body,
          "objects", 0, "id"
        )
        const snapshot = () =>
          sql<{ n: number; m: string }>`SELECT count(*)::int8 AS n, max(modified)::text AS m FROM domains`.pipe(
            Effect.map((rows) => JSON.stringify(rows[0]))
          )
        const fieldValue = fc.oneof(fc.jsonValue(), fc.string(), fc.constantFrom("replace", "status", "homepage", "url_404", "active", "disabled", "https://x.example"))
        const domainBody = fc.oneof(
          fc.jsonValue(),
          fc.record({ domain: fieldValue, default: fieldValue, url_404: fieldValue, homepage: fieldValue }, { requiredKeys: [] })
        )
        const patchBody = fc.oneof(fc.jsonValue(), fc.record({ op: fieldValue, path: fieldValue, value: fieldValue }, { requiredKeys: [] }))
        const loginBody = fc.oneof(fc.jsonValue(), fc.record({ email: fieldValue, password: fieldValue, refresh_token: fieldValue }, { requiredKeys: [] }))
        const cases = [
          ...fc.sample(domainBody, { numRuns: 60, seed: 1 }).map((body) => ["POST", "/api/v4/domains", body] as const),
          ...fc.sample(patchBody, { numRuns: 60, seed: 2 }).map((body) => ["PATCH", `/api/v4/domains/${domainId}`, body] as const),
          ...fc.sample(loginBody, { numRuns: 30, seed: 3 }).map((body) => ["POST", "/api/v4/validate_login", body] as const),
          ...fc.sample(loginBody, { numRuns: 30, seed: 4 }).map((body) => ["POST", "/api/v4/access_token", body] as const),
          ...fc.sample(fc.string(), { numRuns: 40, seed: 5 }).map(
            (junk) => ["GET", `/api/v4/domains?page=${encodeURIComponent(junk)}&domain_name=${encodeURIComponent(junk)}`, undefined] as const
          ),
          ...fc.sample(fc.string({ minLength: 1 }), { numRuns: 40, seed: 6 }).map(
            (junk) => ["GET", `/api/v4/domains/${encodeURIComponent(junk)}`, undefined] as const
          )
        ]
        for (const [method, path, body] of cases) {
          const before = yield* snapshot()
          const reply = yield* call(method, path, { token: admin.token, ...(body === undefined ? {} : { body }) })
          const context = `${method} ${path} ${JSON.stringify(body)} -> ${reply.status} ${reply.text}`
          expect([200, 400, 401, 403, 404], context).toContain(reply.status)
          if (reply.status !== 200) {
            expectErrorBody(reply, context)
            expect(yield* snapshot(), context).toBe(before)
          }
        }
      })
    , 120_000)
  })
})
