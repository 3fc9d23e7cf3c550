import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Groups } from "../src/Groups/Groups.ts"
import { analyticsScenario, FOUR_DAYS } from "./support/AnalyticsScenario.ts"
import { answerValidator, operationOf, typeProblems } from "./support/AnswerShapes.ts"
import { newUtmTemplate, uniqueDomainName } from "./support/Fixtures.ts"
import { at, call, newUser, numberAt, PASSWORD, type Reply, stringAt } from "./support/Http.ts"
import { TestServer } from "./support/TestServer.ts"

const window = `from_unix=${FOUR_DAYS.from_unix}&to_unix=${FOUR_DAYS.to_unix}`

/** Operations with no JSON answer to check: the operational endpoints, the QR image and the CSV exports (test/export.test.ts). */
const NOT_JSON = new Set([
  "/healthz",
  "/readyz",
  "/metrics",
  "/{domain_id}/links/{link_id}/qr",
  "/{domain_id}/export/links.csv",
  "/{domain_id}/export/clicks.csv"
])

/** Version 3 answers one link as `objects: {...}`, not in an array; its fields are checked as version 4's. */
const asListed = (body: unknown) => {
  const objects = at(body, "objects")
  return typeof objects === "object" && objects !== null && !Array.isArray(objects) ? { ...(body as object), objects: [objects] } : body
}

interface Request {
  readonly method: string
  readonly path: string
  readonly body?: unknown
  readonly anonymous?: boolean
  /** Another token than the admin's, for a request that revokes it. */
  readonly token?: string
}

// Every answer a client of the real API reads, recorded from both versions, must be valid against
// the OpenAPI document the service serves for that version (which is derived from the shapes the
// code answers with), and must carry no null and no type where the real API's document types a field
// otherwise. Every JSON operation of each document must be among them.
describe("the type check of answers", () => {
  it("reports a null, a boolean for an integer and an integer for a string, however deep; allows null where it may be", () => {
    expect(typeProblems({ objects: [{ id: 1, delete_on: null, tags: [] }], new_link: true, meta: { previous_page: null } })).toEqual([
      "$.objects[0].delete_on is null",
      "$.new_link is boolean, the real API's document says integer"
    ])
    expect(typeProblems({ objects: [{ is_global: 1, users: [2], last_clicked: null }] })).toEqual([
      "$.objects[0].is_global is integer, the real API's document says string"
    ])
    // A webhook attempt's status is an HTTP status; a link's is text.
    expect(typeProblems({ objects: [{ status: "active", attempts: [{ status: 500 }, { status: "500" }, { status: null }] }] })).toEqual([
      "$.objects[0].attempts[1].status is string, the real API's document says integer",
      "$.objects[0].attempts[2].status is null"
    ])
  })
})

describe("every answer matches the served OpenAPI document and the real API's types", () => {
  layer(TestServer({ URL_CHECK_ALLOW_PRIVATE: "true" }), { excludeTestServices: true })((it) => {
    it.effect("version 4 and version 3, every operation", () =>
      Effect.gen(function* () {
        const s = yield* analyticsScenario()
        const { admin, domainId, a } = s
        const template = yield* newUtmTemplate(admin, domainId, [{ label: "Source", field_code: "utm_source", type: "text", required: true }])
        const groups = yield* Groups
        const sql = yield* SqlClient.SqlClient
        const group = yield* groups.create({ domainId, name: "Launch", global: true, users: [] }).pipe(Effect.orDie)
        yield* groups.addLink(group.id, a).pipe(Effect.orDie)
        const domainName = stringAt((yield* call("GET", `/api/v4/domains/${domainId}`, { token: admin.token })).body, "objects", 0, "domain")
        const documents = {
          v4: (yield* call("GET", "/api/v4/openapi.json")).body,
          v3: (yield* call("GET", "/api/v3/openapi.json")).body
        }
        const validate = answerValidator(documents)

        for (const [id, prefix] of [["v4", "/api/v4"], ["v3", "/api/v3"]] as const) {
          const spare = yield* call("POST", `${prefix}/domains`, { token: admin.token, body: { domain: uniqueDomainName("shape") } })
          const spareId = numberAt(spare.body, "objects", 0, "id")
          const signingOut = yield* newUser({ accountId: admin.accountId, role: "member" })
          const webhookOf = Effect.map(
            call("POST", `${prefix}/${domainId}/webhooks`, { token: admin.token, body: { url: "http://127.0.0.1:9/hook", events: ["link.deleted"], active: false } }),
            (reply) => numberAt(reply.body, "objects", 0, "id")
          )
          const webhook = yield* webhookOf
          const spareWebhook = yield* webhookOf
          const [delivery] = yield* sql<{ id: number }>`
            INSERT INTO webhook_deliveries (webhook_id, event, body, state, retry_until)
            VALUES (${webhook}, 'link.deleted', '{}', 'failed', now()) RETURNING id`
          // A settled delivery's log: an attempt without an answer, then a refused one (no next try).
          yield* sql`
            INSERT INTO webhook_attempts (delivery_id, number, at, status, duration_ms, error, next_attempt)
            VALUES (${delivery!.id}, 1, now(), NULL, 10000, 'no answer within 10000 ms', now()),
                   (${delivery!.id}, 2, now(), 500, 12, 'status 500', NULL)`
          const requests: ReadonlyArray<Request> = [
            { method: "POST", path: "/validate_login", body: { email: admin.email, password: PASSWORD }, anonymous: true },
            { method: "POST", path: "/access_token", body: { email: admin.email, password: PASSWORD }, anonymous: true },
            { method: "GET", path: "/domains" },
            { method: "GET", path: `/domains?domain_name=${domainName}` },
            { method: "GET", path: `/domains/${domainId}` },
            { method: "POST", path: "/domains", body: { domain: uniqueDomainName("shape"), homepage: "https://home.example/" } },
            { method: "PATCH", path: `/domains/${spareId}`, body: { op: "replace", path: "url_404", value: "https://help.example/" } },
            {
              method: "POST",
              path: `/${domainId}/links`,
              body: {
                url: "https://example.com/shaped",
                notes: "every field set",
                tags: [{ name: "promo", shared: true }],
                utm_template_id: template,
                utm_fields: { utm_source: "news" },
                archive_on: Math.floor(Date.now() / 1000) + 86_400,
                redirect_type: 307
              }
            },
            { method: "POST", path: "/links/validate", body: { url: "https://example.com/a%20b" } },
            { method: "GET", path: `/${domainId}/links?users=all` },
            { method: "GET", path: `/${domainId}/links/${a}` },
            { method: "PATCH", path: `/${domainId}/links/${a}`, body: [{ op: "replace", path: "/notes", value: `patched in ${id}` }] },
            { method: "GET", path: `/${domainId}/links/exists?alias=alpha` },
            { method: "GET", path: `/utm_templates?domain_id=${domainId}` },
            { method: "GET", path: `/${domainId}/links/clicked?${window}` },
            ...["daily", "country", "region", "city", "device", "referrer"].map((report) => ({ method: "GET", path: `/${domainId}/clicks/${report}?${window}&user_id=all` })),
            { method: "GET", path: `/${domainId}/links/${a}/clicks` },
            { method: "GET", path: `/${domainId}/links/${a}/clicks?${window}` },
            { method: "GET", path: `/${domainId}/links/${a}/clicks/hourly?${window}` },
            ...["daily", "country", "region", "city", "device", "referrer"].map((report) => ({ method: "GET", path: `/${domainId}/links/${a}/clicks/${report}?${window}` })),
            { method: "GET", path: `/${domainId}/links/${a}/rawclicks` },
            {
              method: "PUT",
              path: `/${domainId}/links/${a}/settings`,
              body: { rules: [{ when: { os: ["ios"] }, url: "https://example.com/ios" }], split: [{ url: "https://example.com/x", weight: 50 }, { url: "https://example.com/y", weight: 50 }], password: "12345678", max_clicks: 5, og: { title: "t" } }
            },
            { method: "GET", path: `/${domainId}/links/${a}/settings` },
            { method: "GET", path: `/${domainId}/links/${a}/clicks/destinations?${window}` },
            { method: "POST", path: `/${domainId}/webhooks`, body: { url: "http://127.0.0.1:9/other", events: ["link.created", "link.clicked"], active: false } },
            { method: "GET", path: `/${domainId}/webhooks` },
            { method: "GET", path: `/${domainId}/webhooks/${webhook}` },
            { method: "PATCH", path: `/${domainId}/webhooks/${webhook}`, body: { events: ["link.updated"] } },
            { method: "POST", path: `/${domainId}/webhooks/${webhook}/rotate-secret` },
            { method: "GET", path: `/${domainId}/webhooks/${webhook}/deliveries` },
            { method: "POST", path: `/${domainId}/webhooks/${webhook}/deliveries/${delivery!.id}/replay` },
            { method: "DELETE", path: `/${domainId}/webhooks/${spareWebhook}` },
            { method: "GET", path: "/error_codes" },
            { method: "GET", path: `/tags?domain_id=${domainId}` },
            { method: "POST", path: "/tags", body: { domain_id: domainId, name: `tag-${id}`, shared: false, notes: "" } },
            { method: "GET", path: "/users" },
            { method: "GET", path: `/groups?domain_id=${domainId}` },
            { method: "DELETE", path: `/domains/${spareId}` },
            { method: "DELETE", path: "/access_token", token: signingOut.token }
          ]
          const covered = new Set<string>()
          for (const request of requests) {
            const reply: Reply = yield* call(request.method, `${prefix}${request.path}`, {
              ...(request.anonymous === true ? {} : { token: request.token ?? admin.token }),
              ...(request.body === undefined ? {} : { body: request.body })
            })
            const context = `${id} ${request.method} ${request.path}`
            expect(reply.status, `${context}: ${reply.text}`).toBe(200)
            expect(validate(id, request.method, `${prefix}${request.path.split("?")[0]}`, reply.status, reply.body), context).toEqual([])
            expect(typeProblems(id === "v3" ? asListed(reply.body) : reply.body), context).toEqual([])
            covered.add(`${request.method} ${operationOf(documents[id], request.method, `${prefix}${request.path.split("?")[0]}`)}`)
          }
          const paths = Object.entries(documents[id] as Record<string, Record<string, unknown>>)
            .filter(([key]) => key === "paths")
            .flatMap(([, value]) => Object.entries(value as Record<string, Record<string, unknown>>))
          const operations = paths.flatMap(([path, item]) =>
            NOT_JSON.has(path.replace(prefix, "")) ? [] : Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)
          )
          expect(operations.filter((operation) => !covered.has(operation)), `${id}: operations without a recorded answer`).toEqual([])
        }
      })
    )
  })
})

/** A path template of a document with its ids filled in. */
const filled = (template: string, ids: { readonly domain: number; readonly link: number }) =>
  template.replace("{domain_id}", String(ids.domain)).replace("{link_id}", String(ids.link))

// Every operation's error answers too: what a request without a token, with ids of nothing, with a
// body that is not JSON or with wrong credentials gets must be one of the error responses its
// operation documents (status, and a code of its list). The answers that are not JSON (QR images,
// metrics) carry a content type their operation documents.
describe("every operation's error answers, images and probes match the served OpenAPI document", () => {
  layer(TestServer({ URL_CHECK_ALLOW_PRIVATE: "true" }), { excludeTestServices: true })((it) => {
    it.effect("version 4 and version 3, every operation", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* call("POST", "/api/v4/domains", { token: user.token, body: { domain: uniqueDomainName("errors") } })
        const domainId = numberAt(domain.body, "objects", 0, "id")
        const link = yield* call("POST", `/api/v4/${domainId}/links`, { token: user.token, body: { url: "https://example.com/e", override_404_check: 1 } })
        const linkId = numberAt(link.body, "objects", 0, "id")
        const documents = {
          v4: (yield* call("GET", "/api/v4/openapi.json")).body,
          v3: (yield* call("GET", "/api/v3/openapi.json")).body
        }
        const validate = answerValidator(documents)
        for (const [id, document] of Object.entries(documents)) {
          const paths = (at(document, "paths") ?? {}) as Record<string, Record<string, { readonly security?: ReadonlyArray<unknown>; readonly requestBody?: unknown; readonly responses: Record<string, { readonly content?: Record<string, unknown> }> }>>
          for (const [template, item] of Object.entries(paths)) {
            for (const [lower, operation] of Object.entries(item)) {
              const method = lower.toUpperCase()
              const context = `${id} ${method} ${template}`
              const answers: Array<readonly [string, Reply]> = []
              const known = filled(template, { domain: domainId, link: linkId })
              if ((operation.security ?? []).length > 0) {
                answers.push(["no token", yield* call(method, known)])
                if (template.includes("{")) answers.push(["ids of nothing", yield* call(method, filled(template, { domain: 999_999_999, link: 999_999_999 }), { token: user.token })])
              }
              if (operation.requestBody !== undefined) {
                answers.push(["text/plain", yield* call(method, known, { token: user.token, rawBody: "{}", headers: { "content-type": "text/plain" } })])
              }
              if (template.endsWith("/validate_login") || template.endsWith("/access_token") && method === "POST") {
                answers.push(["wrong password", yield* call(method, known, { body: { email: "nobody@example.com", password: "wrong" } })])
              }
              if (template.endsWith("/qr")) {
                for (const format of ["png", "svg", "eps"]) {
                  const reply = yield* call(method, `${known}?format=${format}`, { token: user.token })
                  expect(reply.status, `${context} ${format}`).toBe(200)
                  expect(Object.keys(operation.responses["200"]?.content ?? {}), `${context} ${format}`).toContain(reply.headers.get("content-type"))
                }
              }
              if (!template.startsWith("/api/")) {
                const reply = yield* call(method, template)
                expect(reply.status, context).toBe(200)
                if (template === "/metrics") expect(Object.keys(operation.responses["200"]?.content ?? {}), context).toContain(reply.headers.get("content-type"))
                else expect(validate(id, method, template, 200, reply.body), context).toEqual([])
                continue
              }
              expect(answers.length, `${context}: no error answer recorded`).toBeGreaterThan(0)
              for (const [kind, reply] of answers) {
                expect(reply.status, `${context} ${kind}: ${reply.text}`).toBeGreaterThanOrEqual(400)
                expect(validate(id, method, template.startsWith("/api/") ? known : template, reply.status, reply.body), `${context} ${kind}: ${reply.text}`).toEqual([])
              }
            }
          }
        }
      })
    )
  })
})
