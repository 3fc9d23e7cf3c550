import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { ErrorCatalogue } from "../src/Platform/ErrorCatalogue.ts"
import { at, call, newUser, numberAt } from "./support/Http.ts"
import { TestServer } from "./support/TestServer.ts"

const hostile = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.constantFrom(
    "javascript:alert(1)", "data:text/html,x", "http://user:pw@x.example/", "http://x.example/\r\nLocation: evil",
    "http://[::1]/", "http://127.1/", "//x.example", "ftp://x.example", "http://", "http://x.example/" + "a".repeat(5000),
    "%00", "../../etc/passwd", "api", "API", "..", ".", "ä", "a/b", "a?b", "a#b", "<script>", "' OR 1=1 --", "\u0000"
  ),
  fc.jsonValue()
)

describe("E4 under random and hostile input", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("url, alias and notes: always 200 or a documented 400, and a refused request stores nothing", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = numberAt(
          (yield* call("POST", "/api/v4/domains", { token: user.token, body: { domain: `fuzz${Date.now()}.example` } })).body,
          "objects", 0, "id"
        )
        const sql = yield* SqlClient.SqlClient
        const count = () => Effect.map(sql<{ n: number }>`SELECT count(*)::int8 AS n FROM links`, (rows) => rows[0]?.n ?? 0)
        const bodies = fc.sample(
          fc.record({ url: hostile, alias: hostile, notes: hostile, rand_alias_length: hostile, tags: hostile }, { requiredKeys: [] }),
          { numRuns: 150, seed: 42 }
        )
        for (const body of bodies) {
          const before = yield* count()
          const reply = yield* call("POST", `/api/v4/${domainId}/links`, { token: user.token, body: { ...body, override_404_check: 1 } })
          const context = `${JSON.stringify(body).slice(0, 300)} -> ${reply.status} ${reply.text.slice(0, 300)}`
          expect([200, 400], context).toContain(reply.status)
          if (reply.status === 400) {
            const errors = at(reply.body, "errors") as ReadonlyArray<unknown>
            for (const error of errors) expect(Object.hasOwn(ErrorCatalogue, numberAt(error, "code")), context).toBe(true)
            expect(yield* count(), context).toBe(before)
          } else {
            expect(yield* count(), context).toBe(before + 1)
            const location = String(at(reply.body, "objects", 0, "redirect_url"))
            expect(location, context).toMatch(/^https?:\/\/[^\s]+$/)
          }
        }
      })
    , 120_000)
  })
})
