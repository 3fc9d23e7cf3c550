import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { at, call, codes, newUser, numberAt, stringAt } from "./support/Http.ts"
import { captureLogs } from "./support/LogCapture.ts"
import { rawJson, rawRequest } from "./support/RawClient.ts"
import { TestServer } from "./support/TestServer.ts"

const LIMIT = 64 * 1024

/** A valid E9 body of exactly `bytes` bytes: the JSON padded with whitespace. */
const domainBodyOf = (domain: string, bytes: number): string => {
  const head = `{"domain":"${domain}"`
  return head + " ".repeat(bytes - head.length - 1) + "}"
}

const pieces = (text: string, size: number): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

const tooLarge = { errors: [{ code: 10152, message: `request body exceeds ${LIMIT} bytes` }] }

describe("request size limits", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("a Content-Length over 64 KiB is refused with 413 before the body is read", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        for (const length of [LIMIT + 1, 10 * 1024 * 1024]) {
          const outcome = yield* rawRequest({
            method: "POST",
            path: "/api/v4/domains",
            headers: {
              authorization: `Bearer ${user.token}`,
              "content-type": "application/json",
              "content-length": String(length)
            },
            chunks: ['{"domain":'],
            end: false,
            timeoutMs: 3_000
          })
          expect(outcome._tag, JSON.stringify(outcome)).toBe("Response")
          if (outcome._tag !== "Response") continue
          expect(outcome.status).toBe(413)
          expect(outcome.headers["content-type"]).toMatch(/^application\/json/)
          expect(rawJson(outcome)).toEqual(tooLarge)
          expect(outcome.ms).toBeLessThan(1_000)
        }
      })
    )

    it.effect("the Content-Length check comes before authentication", () =>
      Effect.gen(function* () {
        const outcome = yield* rawRequest({
          method: "POST",
          path: "/api/v4/domains",
          headers: { "content-type": "application/json", "content-length": String(LIMIT + 1) },
          chunks: [],
          end: false
        })
        expect(outcome._tag === "Response" && outcome.status).toBe(413)
        expect(rawJson(outcome)).toEqual(tooLarge)
      })
    )

    it.effect("a chunked body over 64 KiB is refused with 413", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        for (const size of [LIMIT + 1, 3 * LIMIT]) {
          const body = domainBodyOf(`chunked${size}-${Date.now()}.example`, size)
          const outcome = yield* rawRequest({
            method: "POST",
            path: "/api/v4/domains",
            headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json" },
            chunks: pieces(body, 8 * 1024),
            end: true
          })
          expect(outcome._tag, JSON.stringify(outcome)).toBe("Response")
          if (outcome._tag !== "Response") continue
          expect(outcome.status).toBe(413)
          expect(rawJson(outcome)).toEqual(tooLarge)
        }
        const list = yield* call("GET", "/api/v4/domains", { token: user.token })
        expect(numberAt(list.body, "meta", "total")).toBe(0)
      })
    )

    it.effect("a chunked body that never ends is answered with 413 once it passes 64 KiB", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const outcome = yield* rawRequest({
          method: "POST",
          path: "/api/v4/domains",
          headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json" },
          chunks: pieces(" ".repeat(LIMIT + 4096), 4096),
          end: false,
          timeoutMs: 3_000
        })
        expect(outcome._tag === "Response" && outcome.status, JSON.stringify(outcome)).toBe(413)
        expect(rawJson(outcome)).toEqual(tooLarge)
      })
    )

    it.effect("a body of exactly 64 KiB is accepted, with Content-Length and chunked", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const sized = domainBodyOf(`sized${Date.now()}.example`, LIMIT)
        expect(Buffer.byteLength(sized)).toBe(LIMIT)
        const reply = yield* call("POST", "/api/v4/domains", { token: user.token, rawBody: sized })
        expect(reply.status, reply.text).toBe(200)
        expect(stringAt(reply.body, "objects", 0, "domain")).toMatch(/^sized\d+\.example$/)

        const chunkedDomain = `chunked${Date.now()}.example`
        const outcome = yield* rawRequest({
          method: "POST",
          path: "/api/v4/domains",
          headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json" },
          chunks: pieces(domainBodyOf(chunkedDomain, LIMIT), 5000),
          end: true
        })
        expect(outcome._tag === "Response" && outcome.status, JSON.stringify(outcome)).toBe(200)
        expect(stringAt(rawJson(outcome), "objects", 0, "domain")).toBe(chunkedDomain)
      })
    )

    it.effect("a small chunked body is read like any other", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = `small${Date.now()}.example`
        const outcome = yield* rawRequest({
          method: "POST",
          path: "/api/v4/domains",
          headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json" },
          chunks: ['{"dom', `ain":"${domain}"}`],
          end: true
        })
        expect(outcome._tag === "Response" && outcome.status, JSON.stringify(outcome)).toBe(200)
        expect(stringAt(rawJson(outcome), "objects", 0, "domain")).toBe(domain)
        const malformed = yield* rawRequest({
          method: "POST",
          path: "/api/v4/domains",
          headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json" },
          chunks: ['{"domain":', " }"],
          end: true
        })
        expect(malformed._tag === "Response" && malformed.status).toBe(400)
        expect(errorCodesOf(rawJson(malformed))).toEqual([10153])
      })
    )

    it.effect("a client that hangs up in the middle of a chunked body leaves the server serving", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const abandoned = yield* rawRequest({
          method: "POST",
          path: "/api/v4/domains",
          headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json" },
          chunks: ['{"domain":"abandoned.example"'],
          end: false,
          timeoutMs: 200
        })
        expect(abandoned._tag).toBe("Timeout")
        const list = yield* call("GET", "/api/v4/domains", { token: user.token })
        expect(list.status).toBe(200)
        expect(numberAt(list.body, "meta", "total")).toBe(0)
      })
    )

    it.effect("a malformed JSON body is a 400 with code 10153, never a framework body or a 500", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        for (const rawBody of ["{", "{\"domain\": }", "not json", "\"unterminated", "{\"domain\":\"a.example\"}}"]) {
          const reply = yield* call("POST", "/api/v4/domains", { token: user.token, rawBody })
          expect(reply.status, rawBody).toBe(400)
          expect(reply.headers.get("content-type"), rawBody).toMatch(/^application\/json/)
          expect(codes(reply), rawBody).toEqual([10153])
          expect(Object.keys(reply.body as object), rawBody).toEqual(["errors"])
        }
      })
    )

    it.effect("a GET with Content-Type: application/json and an empty body is accepted (and a DELETE is routed, not refused)", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const headers = { "content-type": "application/json" }
        const list = yield* call("GET", "/api/v4/domains", { token: user.token, headers })
        expect(list.status, list.text).toBe(200)
        const withZeroLength = yield* rawRequest({
          method: "GET",
          path: "/api/v4/domains",
          headers: { authorization: `Bearer ${user.token}`, ...headers, "content-length": "0" },
          chunks: [],
          end: true
        })
        expect(withZeroLength._tag === "Response" && withZeroLength.status).toBe(200)
        const codesList = yield* call("GET", "/api/v4/error_codes", { token: user.token, headers })
        expect(codesList.status).toBe(200)
        const remove = yield* call("DELETE", "/api/v4/domains", { token: user.token, headers })
        expect(remove.status).toBe(404)
        expect(codes(remove)).toEqual([10151])
      })
    )
  })
})

/** The error codes of a raw answer's body, in order. */
const errorCodesOf = (body: unknown): ReadonlyArray<unknown> => {
  const errors = at(body, "errors")
  return Array.isArray(errors) ? errors.map((error: unknown) => at(error, "code")) : []
}

describe("a request body that arrives too slowly", () => {
  const logs = captureLogs()
  layer(TestServer({ API_DEADLINE_SECONDS: "1" }).pipe(Layer.provide(logs.layer)), { excludeTestServices: true })((it) => {
    it.effect("is answered 408 10154 by the API deadline and logged as the client's delay, not the database's", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const headers = { authorization: `Bearer ${user.token}`, "content-type": "application/json" }
        for (const length of [{ "content-length": "100" }, {}]) {
          const outcome = yield* rawRequest({
            method: "POST",
            path: "/api/v4/domains",
            headers: { ...headers, ...length },
            chunks: ['{"domain":'],
            end: false,
            timeoutMs: 4_000
          })
          expect(outcome._tag === "Response" && outcome.status, JSON.stringify(outcome)).toBe(408)
          expect(rawJson(outcome)).toEqual({ errors: [{ code: 10154, message: "the request body did not arrive in time" }] })
        }
        expect(logs.lines.filter((line) => line.includes("database"))).toEqual([])
        expect(logs.lines.filter((line) => line.includes("POST /api/v4/domains: the client did not send its body within"))).toHaveLength(2)
      })
    )
  })
})
