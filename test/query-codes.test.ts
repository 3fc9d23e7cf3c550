import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { at, call, newUser, numberAt, type Reply } from "./support/Http.ts"
import { documentedCodes } from "./support/OpenApiShapes.ts"
import { TestServer } from "./support/TestServer.ts"

const problems = (reply: Reply) =>
  (at(reply.body, "errors") as ReadonlyArray<unknown>).map((error) => `${numberAt(error, "code")} ${String(at(error, "message"))}`)

// The 400 codes of the domain and link operations read from the query string and the path, each
// answered by a request: a documented code no request can produce is one a client handles for nothing.
describe("the 400 codes of the query-string operations are each answered", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("E3/E8, E13, E6, E14 and E4's path: every documented 400 code, and only those", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = numberAt((yield* call("POST", "/api/v4/domains", { token: user.token, body: { domain: `codes${Date.now()}.example` } })).body, "objects", 0, "id")
        const link = yield* call("POST", `/api/v4/${domainId}/links`, { token: user.token, body: { url: "https://example.com/", override_404_check: 1 } })
        const linkId = numberAt(link.body, "objects", 0, "id")
        const document = (yield* call("GET", "/api/v4/openapi.json")).body
        const cases: ReadonlyArray<readonly [path: string, method: string, requests: ReadonlyArray<readonly [string, ReadonlyArray<string>]>]> = [
          [
            "/api/v4/domains",
            "get",
            [
              ["/api/v4/domains?page=0", ["10408 page is invalid"]],
              // A parameter given twice is a list, no text: once, though both members of its type refuse it.
              ["/api/v4/domains?domain_name=a.example&domain_name=b.example", ["10153 domain_name has the wrong type"]]
            ]
          ],
          [
            "/api/v4/{domain_id}/links/exists",
            "get",
            [
              [`/api/v4/${domainId}/links/exists`, ["10102 alias is invalid"]],
              [`/api/v4/${domainId}/links/exists?alias=a&alias=b`, ["10153 alias has the wrong type"]]
            ]
          ],
          [
            "/api/v4/{domain_id}/links",
            "get",
            [
              [`/api/v4/${domainId}/links?page=0&order=new`, ["10120 page is invalid", "10123 order is invalid"]],
              [`/api/v4/${domainId}/links?keyword=${"k".repeat(201)}&url=${"u".repeat(4097)}`, ["10121 keyword is invalid", "10122 url is invalid"]],
              [`/api/v4/${domainId}/links?group_id=x&from_unix=-1&to_unix=y`, ["10160 group_id is invalid", "10500 from_unix is invalid", "10501 to_unix is invalid"]],
              [`/api/v4/${domainId}/links?users=all&users=mine&tag=a&tag=b`, ["10153 users has the wrong type", "10153 tag has the wrong type"]]
            ]
          ],
          [
            "/api/v4/{domain_id}/links/{link_id}/qr",
            "get",
            [
              [`/api/v4/${domainId}/links/${linkId}/qr?format=gif`, ["10600 format must be png, svg or eps"]],
              [`/api/v4/${domainId}/links/${linkId}/qr?format=png&format=svg`, ["10600 format must be png, svg or eps"]]
            ]
          ]
        ]
        for (const [path, method, requests] of cases) {
          const answered = new Set<number>()
          for (const [request, expected] of requests) {
            const reply = yield* call("GET", request, { token: user.token })
            expect([reply.status, problems(reply)], request).toEqual([400, expected])
            for (const problem of expected) answered.add(Number(problem.split(" ")[0]))
          }
          expect(documentedCodes(document, path, method, "400"), path).toEqual([...answered].sort())
        }
        // E4 with a domain id that is no number: 400, where an unknown domain is 404.
        const notAnId = yield* call("POST", "/api/v4/abc/links", { token: user.token, body: { url: "https://example.com/" } })
        expect([notAnId.status, problems(notAnId)]).toEqual([400, ["10101 domain_id is invalid"]])
        expect(documentedCodes(document, "/api/v4/{domain_id}/links", "post", "400")).toContain(10101)
      })
    )
  })
})
