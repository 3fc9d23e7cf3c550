import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, LogLevel } from "effect"
import { newDomain, newLink } from "./support/Fixtures.ts"
import { at, call, codes, newUser, PASSWORD } from "./support/Http.ts"
import { captureLogs } from "./support/LogCapture.ts"
import { rawRequest } from "./support/RawClient.ts"
import { TestServer } from "./support/TestServer.ts"

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const started = performance.now()
    const result = yield* effect
    return { result, ms: performance.now() - started }
  })

describe("security regressions", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("another account's token is refused on every endpoint that names a domain, link or tag, and changes nothing", () =>
      Effect.gen(function* () {
        const owner = yield* newUser()
        const domainId = yield* newDomain(owner)
        const linkId = yield* newLink(owner, domainId, { alias: "mine", notes: "kept" })
        const intruder = yield* newUser()
        const d = `/api/v4/${domainId}`
        const l = `${d}/links/${linkId}`
        const attempts: ReadonlyArray<readonly [string, string, unknown, number, number]> = [
          ["GET", `/api/v4/domains/${domainId}`, undefined, 404, 10101],
          ["PATCH", `/api/v4/domains/${domainId}`, { op: "replace", path: "status", value: "disabled" }, 404, 10101],
          ["POST", `${d}/links`, { url: "https://example.com/", override_404_check: 1 }, 404, 10101],
          ["GET", `${d}/links`, undefined, 404, 10101],
          ["GET", l, undefined, 404, 10101],
          ["PATCH", l, [{ op: "replace", path: "/notes", value: "taken" }], 404, 10101],
          ["GET", `${d}/links/exists?alias=mine`, undefined, 404, 10101],
          ["GET", `${l}/qr`, undefined, 404, 10101],
          ["GET", `/api/v4/utm_templates?domain_id=${domainId}`, undefined, 404, 10201],
          ["GET", `/api/v4/tags?domain_id=${domainId}`, undefined, 404, 10301],
          ["POST", "/api/v4/tags", { domain_id: domainId, name: "theirs" }, 404, 10301],
          ["GET", `${d}/links/clicked`, undefined, 404, 10101],
          ["GET", `${d}/clicks/daily`, undefined, 404, 10101],
          ["GET", `${d}/clicks/referrer?link_id=${linkId}`, undefined, 404, 10101],
          ["GET", `${l}/clicks`, undefined, 404, 10101],
          ["GET", `${l}/clicks/hourly`, undefined, 404, 10101],
          ["GET", `${l}/clicks/city`, undefined, 404, 10101],
          ["GET", `${l}/rawclicks`, undefined, 404, 10101],
          ["GET", `/api/v3/${domainId}/links/${linkId}`, undefined, 404, 10101]
        ]
        for (const [method, path, body, status, code] of attempts) {
          const reply = yield* call(method, path, { token: intruder.token, ...(body === undefined ? {} : { body }) })
          expect([method, path, reply.status, codes(reply)]).toEqual([method, path, status, [code]])
        }
        const link = yield* call("GET", l, { token: owner.token })
        expect(at(link.body, "objects", 0, "notes")).toBe("kept")
        const domain = yield* call("GET", `/api/v4/domains/${domainId}`, { token: owner.token })
        expect(at(domain.body, "objects", 0, "status")).toBe("active")
        const tags = yield* call("GET", `/api/v4/tags?domain_id=${domainId}`, { token: owner.token })
        expect(at(tags.body, "objects")).toEqual([])
      })
    )

    it.effect("an unknown e-mail and a wrong password take about the same time (both verify an argon2id hash)", () =>
      Effect.gen(function* () {
        // Distinct e-mails, so that the growing delays for repeated failures play no part.
        const users = yield* Effect.forEach(Array.from({ length: 6 }), () => newUser())
        const unknown: Array<number> = []
        const wrong: Array<number> = []
        for (const [n, user] of users.entries()) {
          const a = yield* timed(call("POST", "/api/v4/validate_login", { body: { email: `nobody${n}.${Date.now()}@example.com`, password: PASSWORD } }))
          const b = yield* timed(call("POST", "/api/v4/validate_login", { body: { email: user.email, password: `${PASSWORD}!` } }))
          expect([a.result.status, b.result.status]).toEqual([401, 401])
          unknown.push(a.ms)
          wrong.push(b.ms)
        }
        const ratio = median(unknown) / median(wrong)
        expect(ratio).toBeGreaterThan(0.5)
        expect(ratio).toBeLessThan(2)
      })
    )
  })
})

describe("logged request URLs", () => {
  const logs = captureLogs()
  layer(TestServer({ API_DEADLINE_SECONDS: "1" }, LogLevel.Info).pipe(Layer.provide(logs.layer)), { excludeTestServices: true })((it) => {
    it.effect("carry no value of access_token, token, password or refresh_token, in any case or spelling", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const secrets =
          "access_token=SECRET1&Token=SECRET2&PASSWORD=SECRET3&refresh_token=SECRET4&access%5Ftoken=SECRET5&pass%77ord=SECRET6"
        yield* call("GET", `/api/v4/error_codes?${secrets}&page=2&keep=visible`, { token: user.token })
        yield* rawRequest({
          method: "POST",
          path: "/api/v4/domains?refresh_TOKEN=SECRET7&x=1",
          headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json", "content-length": "50" },
          chunks: ["{"],
          end: false,
          timeoutMs: 4_000
        })
        const access = logs.lines.find((line) => line.includes("page=2"))
        expect(access).toContain("/api/v4/error_codes?access_token=REDACTED&Token=REDACTED&PASSWORD=REDACTED")
        expect(access).toContain("&page=2&keep=visible")
        expect(logs.lines.find((line) => line.includes("did not send its body"))).toContain("refresh_TOKEN=REDACTED&x=1")
        expect(logs.lines.filter((line) => /SECRET/.test(line))).toEqual([])
        expect(logs.lines.filter((line) => line.includes(user.token))).toEqual([])
      })
    )

    it.effect("the access line names the route, the time taken and the request's id, which the answer carries; probes log at debug", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const given = yield* call("GET", "/api/v4/error_codes?page=2", { token: user.token, headers: { "x-request-id": "edge-42.a" } })
        expect(given.headers.get("x-request-id")).toBe("edge-42.a")
        const made = yield* call("GET", "/api/v4/error_codes?page=3", { token: user.token, headers: { "x-request-id": "not an id" } })
        const madeId = made.headers.get("x-request-id") ?? ""
        expect(madeId).toMatch(/^[0-9a-f-]{36}$/)
        yield* call("GET", "/healthz")
        const access = logs.lines.filter((line) => line.startsWith("Sent HTTP response "))
        const annotationsOf = (id: string) => {
          const line = access.find((candidate) => candidate.includes(`"request.id":"${id}"`))
          return line === undefined ? undefined : (JSON.parse(line.slice("Sent HTTP response ".length)) as Record<string, unknown>)
        }
        expect(annotationsOf("edge-42.a")).toMatchObject({
          "http.method": "GET",
          "http.url": "/api/v4/error_codes?page=2",
          "http.route": "/api/v4/error_codes",
          "http.status": 200
        })
        expect(annotationsOf("edge-42.a")?.["http.duration_ms"]).toEqual(expect.any(Number))
        expect(annotationsOf(madeId)).toMatchObject({ "http.url": "/api/v4/error_codes?page=3" })
        expect(access.some((line) => line.includes('"http.url":"/healthz"'))).toBe(false)
      })
    )
  })
})
