import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Server, ServerResponse } from "node:http"
import { makeNodeServer } from "../src/Platform/NodeServer.ts"
import { Shutdown } from "../src/Platform/Shutdown.ts"
import { DatabaseLink, BreakableServer } from "./support/BreakableServer.ts"
import { at, call, codes, newUser } from "./support/Http.ts"
import { linkTotalsShapes } from "./support/OpenApiShapes.ts"
import { openRaw, parseResponse } from "./support/OpsSockets.ts"
import { type Exposition, parseExposition, samplesOf, valueOf } from "./support/Prometheus.ts"
import { BaseUrl, TestServer } from "./support/TestServer.ts"

const scrape = Effect.gen(function* () {
  const reply = yield* call("GET", "/metrics")
  expect(reply.status).toBe(200)
  expect(reply.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/)
  return parseExposition(reply.text)
})

const requests = (exposition: Exposition, route: string, method: string, status: string) =>
  valueOf(exposition, "http_requests_total", { route, method, status })

const DURATION = "http_request_duration_seconds"

/** Every latency histogram series: cumulative buckets ending at +Inf = count, and count = requests. */
const expectConsistentHistograms = (exposition: Exposition) => {
  expect(exposition.types.get(DURATION)).toBe("histogram")
  const counts = samplesOf(exposition, `${DURATION}_count`)
  expect(counts.length).toBeGreaterThan(0)
  for (const count of counts) {
    const { route, method } = count.labels
    expect(Object.keys(count.labels).sort()).toEqual(["method", "route"])
    const buckets = samplesOf(exposition, `${DURATION}_bucket`, { route: route!, method: method! })
    const bounds = buckets.map((bucket) => Number(bucket.labels.le === "+Inf" ? Infinity : bucket.labels.le))
    expect(bounds).toEqual([...bounds].sort((a, b) => a - b))
    expect(bounds.at(-1)).toBe(Infinity)
    const values = buckets.map((bucket) => bucket.value)
    values.forEach((value, i) => expect(value).toBeGreaterThanOrEqual(i === 0 ? 0 : values[i - 1]!))
    expect(values.at(-1)).toBe(count.value)
    const sum = valueOf(exposition, `${DURATION}_sum`, { route: route!, method: method! })
    expect(sum).toBeGreaterThanOrEqual(0)
    expect(sum).toBeLessThan(count.value * 60)
    expect(valueOf(exposition, "http_requests_total", { route: route!, method: method! })).toBe(count.value)
  }
}

/** Every `$ref` of an OpenAPI document points at something that exists in it. */
const danglingRefs = (document: unknown): ReadonlyArray<string> => {
  const dangling: Array<string> = []
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (typeof node !== "object" || node === null) return
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") {
        const path = value.replace(/^#\//, "").split("/").map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
        if (!value.startsWith("#/") || at(document, ...path) === undefined) dangling.push(value)
      } else visit(value)
    }
  }
  visit(document)
  return dangling
}

const portOf = (base: string) => Number(new URL(base).port)

describe("operational endpoints", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("/healthz and /readyz answer 200 while the database answers", () =>
      Effect.gen(function* () {
        const health = yield* call("GET", "/healthz")
        expect(health.status).toBe(200)
        expect(health.body).toEqual({ status: "ok" })
        const ready = yield* call("GET", "/readyz")
        expect(ready.status).toBe(200)
        expect(ready.body).toEqual({ status: "ready" })
      })
    )

    it.effect("/metrics counts exactly the requests made, by route template, method and status", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const before = yield* scrape
        for (let i = 0; i < 3; i++) {
          expect((yield* call("GET", "/api/v4/domains", { token: user.token })).status).toBe(200)
        }
        expect((yield* call("GET", "/api/v4/domains")).status).toBe(401)
        for (const id of [987654, 987655]) {
          expect((yield* call("GET", `/api/v4/domains/${id}`, { token: user.token })).status).toBe(404)
        }
        const after = yield* scrape
        const delta = (route: string, status: string) =>
          requests(after, route, "GET", status) - requests(before, route, "GET", status)
        expect(delta("/api/v4/domains", "200")).toBe(3)
        expect(delta("/api/v4/domains", "401")).toBe(1)
        expect(delta("/api/v4/domains/:domain_id", "404")).toBe(2)
        expect(after.types.get("http_requests_total")).toBe("counter")
        expect(after.samples.some((s) => Object.values(s.labels).some((v) => v.includes("98765")))).toBe(false)
        const histogram = (exposition: Exposition) =>
          valueOf(exposition, `${DURATION}_count`, { route: "/api/v4/domains", method: "GET" })
        expect(histogram(after) - histogram(before)).toBe(4)
      })
    )

    it.effect("/metrics labels unknown routes \"unmatched\" instead of one series per path", () =>
      Effect.gen(function* () {
        const junk = `junk${Date.now().toString(36)}`
        const before = yield* scrape
        for (const path of [`/${junk}`, `/${junk}/a/b?c=d`, `/api/v4/${junk}`, `/api/v4/domains/1/${junk}`]) {
          const reply = yield* call("GET", path)
          expect(reply.status).toBe(404)
          expect(codes(reply)).toEqual([10151])
        }
        expect((yield* call("POST", `/${junk}`, { body: {} })).status).toBe(404)
        const after = yield* scrape
        expect(requests(after, "unmatched", "GET", "404") - requests(before, "unmatched", "GET", "404")).toBe(4)
        expect(requests(after, "unmatched", "POST", "404") - requests(before, "unmatched", "POST", "404")).toBe(1)
        expect(after.samples.filter((s) => Object.values(s.labels).some((v) => v.includes(junk)))).toEqual([])
      })
    )

    it.effect("/metrics latency histograms are cumulative and agree with the request counters", () =>
      Effect.gen(function* () {
        yield* call("GET", "/healthz")
        yield* call("GET", "/api/v4/error_codes")
        yield* call("GET", "/nowhere")
        const exposition = yield* scrape
        expectConsistentHistograms(exposition)
        expect(valueOf(exposition, `${DURATION}_count`, { route: "/healthz", method: "GET" })).toBeGreaterThanOrEqual(1)
        for (const [name, type] of exposition.types) {
          if (type === "counter") expect(name, `${name} is typed counter`).not.toBe("effect_fiber_active")
        }
      })
    )

    it.effect("/api/v4/openapi.json is an OpenAPI 3 document of the API with the bearer scheme", () =>
      Effect.gen(function* () {
        const reply = yield* call("GET", "/api/v4/openapi.json")
        expect(reply.status).toBe(200)
        expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
        const document = reply.body
        expect(String(at(document, "openapi"))).toMatch(/^3\.\d+\.\d+$/)
        expect(typeof at(document, "info", "title")).toBe("string")
        expect(typeof at(document, "info", "version")).toBe("string")
        const paths = at(document, "paths")
        for (const path of [
          "/api/v4/validate_login",
          "/api/v4/access_token",
          "/api/v4/domains",
          "/api/v4/domains/{domain_id}",
          "/api/v4/error_codes"
        ]) {
          expect(at(paths, path), path).toBeTypeOf("object")
        }
        expect(Object.keys(at(paths, "/api/v4/domains") as object).sort()).toEqual(["get", "post"])
        for (const [path, item] of Object.entries(paths as object)) {
          for (const [method, operation] of Object.entries(item as object)) {
            expect(Object.keys(at(operation, "responses") as object).length, `${method} ${path}`).toBeGreaterThan(0)
          }
        }
        expect(danglingRefs(document)).toEqual([])
        expect(linkTotalsShapes(document, "/api/v4")).toEqual([["scan_count", "total", "unique"], ["count"]])
        expect(at(document, "components", "securitySchemes", "bearer")).toEqual({ type: "http", scheme: "bearer" })
        expect(at(paths, "/api/v4/domains", "get", "security")).toEqual([{ bearer: [] }])
        expect(at(paths, "/api/v4/access_token", "post", "security")).toEqual([])
      })
    )

    it.effect("/api/docs serves the docs UI with its script inline, nothing from a CDN", () =>
      Effect.gen(function* () {
        const reply = yield* call("GET", "/api/docs")
        expect(reply.status).toBe(200)
        expect(reply.headers.get("content-type")).toMatch(/^text\/html/)
        const html = reply.text
        expect(html).not.toMatch(/<script[^>]*\ssrc=/i)
        expect(html).not.toMatch(/<link[^>]*\shref=/i)
        expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//i)
        const scripts = [...html.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]!)
        expect(scripts.some((script) => script.length > 500_000)).toBe(true)
        const spec = /<script id="api-reference" type="application\/json">([\s\S]*?)<\/script>/.exec(html)
        expect(at(JSON.parse(spec![1]!), "paths", "/api/v4/domains")).toBeTypeOf("object")
        // Without this the bundle fetches its fonts from fonts.scalar.com.
        expect(html).toContain('"withDefaultFonts":false')
      })
    )

    it.effect(
      "the listener drops a client that never finishes its headers after headersTimeout (10 s)",
      () =>
        Effect.gen(function* () {
          const port = portOf(yield* BaseUrl)
          const slow = yield* Effect.promise(() => openRaw(port))
          yield* Effect.promise(() => slow.write("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n"))
          const { received, afterMs } = yield* Effect.promise(() => slow.closed)
          expect(parseResponse(received).status).toBe(408)
          expect(afterMs).toBeGreaterThanOrEqual(9_500)
          expect(afterMs).toBeLessThan(13_000)
        }),
      25_000
    )
  })

  // `layer`, not `it.layer`: the first block's `it.layer` is now the nested one, over TestServer.
  layer(BreakableServer(), { excludeTestServices: true })((it) => {
    it.effect("/readyz answers 503 with 10902 while the database is unreachable, and 200 once it is back", () =>
      Effect.gen(function* () {
        const link = yield* DatabaseLink
        expect((yield* call("GET", "/readyz")).status).toBe(200)
        yield* link.cut
        const started = Date.now()
        const down = yield* call("GET", "/readyz")
        expect(down.status).toBe(503)
        expect(codes(down)).toEqual([10902])
        expect(Date.now() - started).toBeLessThan(5_000)
        expect((yield* call("GET", "/healthz")).status).toBe(200)
        const api = yield* call("POST", "/api/v4/access_token", { body: { email: "a@example.com", password: "whatever it is" } })
        expect(api.status).toBe(503)
        expect(codes(api)).toEqual([10902])
        yield* link.restore
        let ready = 0
        for (let attempt = 0; attempt < 50 && ready !== 200; attempt++) {
          ready = (yield* call("GET", "/readyz")).status
          if (ready !== 200) yield* Effect.sleep("200 millis")
        }
        expect(ready).toBe(200)
      })
    )
  })
})

describe("node server timeouts", () => {
  const listen = (server: Server, answer = (response: ServerResponse) => void response.end("ok")) =>
    new Promise<number>((resolve) => {
      server.on("request", (_request, response) => answer(response))
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        resolve(typeof address === "object" && address !== null ? address.port : 0)
      })
    })

  it("sets every timeout explicitly", () => {
    const server = makeNodeServer()
    expect(server.headersTimeout).toBe(10_000)
    expect(server.requestTimeout).toBe(30_000)
    expect(server.keepAliveTimeout).toBe(5_000)
  })

  it("cuts partial headers after headersTimeout, checked at connectionsCheckingInterval", async () => {
    const server = makeNodeServer({ headersTimeout: 600, requestTimeout: 2_000, connectionsCheckingInterval: 100 })
    const port = await listen(server)
    try {
      const slow = await openRaw(port)
      const prompt = await openRaw(port)
      await slow.write("GET / HTTP/1.1\r\nHost: x\r\n")
      await prompt.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      const answered = await prompt.closed
      expect(parseResponse(answered.received)).toMatchObject({ status: 200, body: "ok" })
      const cut = await slow.closed
      expect(parseResponse(cut.received).status).toBe(408)
      expect(cut.afterMs).toBeGreaterThanOrEqual(550)
      expect(cut.afterMs).toBeLessThan(1_500)
    } finally {
      server.close()
    }
  })

  it("an unanswered request is 503 10902 (the database); a body that has not arrived is 408 10154 (the client)", async () => {
    const late: Array<string> = []
    const server = makeNodeServer({ apiDeadline: 400 }, undefined, (request, cause) => late.push(`${request.method} ${cause}`))
    const port = await listen(server, () => undefined)
    try {
      const stuck = await openRaw(port)
      const slowBody = await openRaw(port)
      await stuck.write("GET /api/v4/domains HTTP/1.1\r\nHost: x\r\n\r\n")
      await slowBody.write("POST /api/v4/domains HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
      const cut = await slowBody.closed
      const answer = parseResponse(cut.received)
      expect(answer.status).toBe(408)
      expect(answer.body).toContain('{"errors":[{"code":10154,')
      expect(cut.afterMs).toBeLessThan(2_000)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(late.sort()).toEqual(["GET answer", "POST body"])
      stuck.socket.destroy()
    } finally {
      server.close()
    }
  })
})

describe("/readyz during a stop", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("answers 503 10903 (stopping, not a database problem) once a stop is requested", () =>
      Effect.gen(function* () {
        expect((yield* call("GET", "/readyz")).status).toBe(200)
        ;(yield* Shutdown).request()
        const stopping = yield* call("GET", "/readyz")
        expect(stopping.status).toBe(503)
        expect(codes(stopping)).toEqual([10903])
        const alive = yield* call("GET", "/healthz")
        expect(alive.status).toBe(200)
      })
    )
  })
})
