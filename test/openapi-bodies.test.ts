import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { at, call, codes, newUser } from "./support/Http.ts"
import { TestServer } from "./support/TestServer.ts"
import { BODY_OPERATIONS } from "./support/ApiContract.ts"


describe("request bodies that are not JSON", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("a body that is not JSON (text/plain, form encoded, none) gets 400 10153 on every endpoint that reads one, in both versions", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* call("POST", "/api/v4/domains", { token: user.token, body: { domain: `plain${Date.now()}.example` } })
        const domainId = Number(at(domain.body, "objects", 0, "id"))
        const link = yield* call("POST", `/api/v4/${domainId}/links`, {
          token: user.token,
          body: { url: "https://example.com/plain", override_404_check: 1 }
        })
        const linkId = Number(at(link.body, "objects", 0, "id"))
        const bodies: ReadonlyArray<readonly [string, string]> = [
          ["text/plain", "hello"],
          ["text/plain", JSON.stringify({ url: "https://example.com/x", domain: "x.example", op: "replace", path: "/notes", value: "x" })],
          ["text/plain; charset=utf-8", "[1, 2]"],
          ["application/x-www-form-urlencoded", "url=https%3A%2F%2Fexample.com&email=a%40b.c&password=x"],
          ["application/octet-stream", "\u0000\u0001"],
          ["text/csv", ""]
        ]
        for (const prefix of ["/api/v4", "/api/v3"]) {
          for (const operation of BODY_OPERATIONS) {
            const [method, template] = operation.split(" ") as [string, string]
            const path = `${prefix}${template.replace("{domain_id}", String(domainId)).replace("{link_id}", String(linkId)).replace("{webhook_id}", "1")}`
            for (const [type, text] of bodies) {
              const reply = yield* call(method, path, { token: user.token, rawBody: text, headers: { "content-type": type } })
              const context = `${method} ${path} ${type} ${JSON.stringify(text)}: ${reply.text}`
              expect(reply.status, context).toBe(400)
              expect(codes(reply), context).toEqual([10153])
              expect(reply.body, context).toEqual({ errors: [{ code: 10153, message: "the request body must be JSON (Content-Type: application/json)" }] })
            }
          }
        }
      })
    )
    it.effect("the token and malformed path ids are still checked first (as for malformed JSON); an endpoint that reads no body ignores the type", () =>
      Effect.gen(function* () {
        const plain = { rawBody: "hello", headers: { "content-type": "text/plain" } }
        const anonymous = yield* call("POST", "/api/v4/domains", plain)
        expect([anonymous.status, codes(anonymous)]).toEqual([401, [10000]])
        const user = yield* newUser()
        const missing = yield* call("PATCH", "/api/v4/domains/not-an-id", { token: user.token, ...plain })
        expect([missing.status, codes(missing)]).toEqual([404, [10101]])
        const domain = yield* call("POST", "/api/v4/domains", { token: user.token, body: { domain: `ignored${Date.now()}.example` } })
        const removed = yield* call("DELETE", `/api/v4/domains/${String(at(domain.body, "objects", 0, "id"))}`, { token: user.token, ...plain })
        expect(removed.status, removed.text).toBe(200)
      })
    )
  })
})
