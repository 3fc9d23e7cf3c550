import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { openTcpProxy } from "../bench/support/TcpProxy.ts"
import { AppConfig } from "../src/Config.ts"
import { jsonLogger } from "../src/Platform/JsonLogger.ts"
import { Mailer } from "../src/Platform/Mailer.ts"
import { RateLimiter } from "../src/Platform/RateLimiter.ts"
import { newDomain } from "./support/Fixtures.ts"
import { call, newUser } from "./support/Http.ts"
import { redisReachable, testRedisUrl } from "./support/RateWindow.ts"
import { newShortDomain, visit } from "./support/Redirects.ts"
import { describeUnless, withoutRedis } from "./support/SkipReasons.ts"
import { TestServer } from "./support/TestServer.ts"
import { BreakableServer, DatabaseLink } from "./support/BreakableServer.ts"
import { parseExposition, valueOf } from "./support/Prometheus.ts"

interface Line {
  readonly message: unknown
  readonly logLevel: string
  readonly details?: ReadonlyArray<unknown>
  readonly annotations: Record<string, unknown>
}

/** The service's JSON logger, keeping each line it writes, parsed. */
const captureJson = () => {
  const lines: Array<Line> = []
  const layer = Logger.replace(Logger.defaultLogger, Logger.map(jsonLogger, (text) => void lines.push(JSON.parse(text))))
  return { lines, layer }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe("the JSON logger", () => {
  it.effect("writes every message as a string; other values go to details, errors as one line", () =>
    Effect.gen(function* () {
      const logs = captureJson()
      yield* Effect.logWarning("database unavailable", { code: "ECONNREFUSED" }, new Error("boom")).pipe(Effect.provide(logs.layer))
      yield* Effect.logInfo({ only: "an object" }).pipe(Effect.provide(logs.layer))
      yield* Effect.logInfo("two", "strings").pipe(Effect.provide(logs.layer))
      expect(logs.lines.map((line) => [line.message, line.details])).toEqual([
        ["database unavailable", [{ code: "ECONNREFUSED" }, "Error: boom"]],
        ['{"only":"an object"}', undefined],
        ["two strings", undefined]
      ])
    })
  )
})

describe("the access log", () => {
  const logs = captureJson()
  layer(
    TestServer({ LOG_LEVEL: "debug", TRUST_PROXY: "127.0.0.1" }, LogLevel.Debug).pipe(Layer.provide(logs.layer)),
    { excludeTestServices: true }
  )((it) => {
    const accessLines = (id: string) => logs.lines.filter((line) => line.annotations["request.id"] === id)

    it.effect("one line per API request: route template, status, latency, request id (kept or made, and echoed), client address, user", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* newDomain(user)
        const reply = yield* call("GET", `/api/v4/domains/${domainId}?access_token=secret`, {
          token: user.token,
          headers: { "x-request-id": "req-42.a:b", "x-forwarded-for": "203.0.113.9" }
        })
        expect(reply.status).toBe(200)
        expect(reply.headers.get("x-request-id")).toBe("req-42.a:b")
        const [line, ...more] = accessLines("req-42.a:b")
        expect(more).toEqual([])
        expect(line?.message).toBe("Sent HTTP response")
        expect(line?.logLevel).toBe("INFO")
        expect(line?.annotations).toMatchObject({
          "http.method": "GET",
          "http.route": "/api/v4/domains/:domain_id",
          "http.status": 200,
          "http.url": `/api/v4/domains/${domainId}?access_token=REDACTED`,
          "client.address": "203.0.113.9",
          "user.id": user.userId
        })
        expect(typeof line?.annotations["http.duration_ms"]).toBe("number")

        for (const sent of ["has space", "x".repeat(65), "semi;colon"]) {
          const unknown = yield* call("GET", "/api/v4/nothing-here", { headers: { "x-request-id": sent } })
          expect(unknown.status).toBe(404)
          const made = unknown.headers.get("x-request-id") ?? ""
          expect(made).toMatch(UUID)
          const [made404] = accessLines(made)
          expect(made404?.annotations).toMatchObject({ "http.route": "unmatched", "http.status": 404, "client.address": "127.0.0.1" })
          expect(made404?.annotations["user.id"]).toBeUndefined()
        }
      })
    )

    it.effect("the docs pages and OpenAPI documents, served beside the API's routes, are logged with their own paths as routes", () =>
      Effect.gen(function* () {
        for (const path of ["/api/docs", "/api/v3/docs", "/api/v4/openapi.json", "/api/v3/openapi.json"]) {
          const reply = yield* call("GET", `${path}?x=1`)
          expect(reply.status, path).toBe(200)
          const [line] = accessLines(reply.headers.get("x-request-id") ?? "")
          expect(line?.annotations, path).toMatchObject({ "http.route": path, "http.status": 200 })
        }
        const [unknown] = accessLines((yield* call("GET", "/api/v4/docs")).headers.get("x-request-id") ?? "")
        expect(unknown?.annotations).toMatchObject({ "http.route": "unmatched", "http.status": 404 })
      })
    )

    it.effect("health probes and scrapes log at debug; redirects log at debug only, with status and latency", () =>
      Effect.gen(function* () {
        for (const path of ["/healthz", "/readyz", "/metrics"]) {
          const reply = yield* call("GET", path)
          const [line] = accessLines(reply.headers.get("x-request-id") ?? "")
          expect(line?.logLevel, path).toBe("DEBUG")
        }
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const answer = yield* visit(domain.name, "/no-such-alias")
        expect(answer.status).toBe(404)
        const redirects = logs.lines.filter((line) => line.annotations["http.host"] === domain.name)
        expect(redirects.map((line) => [line.message, line.logLevel, line.annotations["http.status"]])).toEqual([["Sent redirect", "DEBUG", 404]])
        expect(typeof redirects[0]?.annotations["http.duration_ms"]).toBe("number")
        expect(logs.lines.every((line) => typeof line.message === "string")).toBe(true)
      })
    )
  })
})

const warnings = (lines: ReadonlyArray<Line>) => lines.filter((line) => line.logLevel === "WARN")

const redisUp = await redisReachable(testRedisUrl)

describe("a dependency that goes down and comes back logs one warning, then one line when it is back", () => {
  it.live("SMTP: one warning, sends fail at once while the retry waits (5 s), one info line once a send succeeds", () => {
    const logs = captureJson()
    return Effect.gen(function* () {
      const received: Array<string> = []
      const smtp = new SMTPServer({
        authOptional: true,
        disabledCommands: ["STARTTLS", "AUTH"],
        onData(stream, _session, callback) {
          stream.on("data", (chunk: Buffer) => received.push(chunk.toString()))
          stream.on("end", () => callback())
        }
      })
      const port = yield* Effect.promise(() => new Promise<number>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve((smtp.server.address() as AddressInfo).port))))
      yield* Effect.addFinalizer(() => Effect.sync(() => smtp.close()))
      const proxy = yield* Effect.acquireRelease(Effect.promise(() => openTcpProxy({ host: "127.0.0.1", port })), (p) => Effect.promise(p.close))
      proxy.cut()
      const mailer = Context.get(
        yield* Layer.build(Mailer.layer.pipe(Layer.provide(AppConfig.layerFromMap({ SMTP_URL: `smtp://127.0.0.1:${proxy.port}` })))),
        Mailer
      )
      const mail = { to: "owner@example.com", subject: "clicks", text: "1 new click" }
      const first = yield* Effect.either(mailer.send(mail))
      expect(first._tag).toBe("Left")
      const started = Date.now()
      for (let i = 0; i < 5; i++) {
        const again = yield* Effect.either(mailer.send(mail))
        expect(again._tag === "Left" && String(again.left.cause)).toMatch(/SMTP server is unavailable; next attempt in [1-5] s/)
      }
      expect(Date.now() - started).toBeLessThan(1000)
      expect(warnings(logs.lines).map((line) => line.message)).toEqual([
        expect.stringMatching(/^the SMTP server unavailable: .*retrying with backoff/)
      ])
      proxy.restore()
      yield* Effect.sleep(5_100)
      yield* mailer.send(mail)
      expect(received.join("")).toContain("1 new click")
      expect(warnings(logs.lines)).toHaveLength(1)
      expect(logs.lines.filter((line) => line.logLevel === "INFO").map((line) => line.message)).toEqual([
        expect.stringMatching(/^the SMTP server available again after \d+(\.\d)? s$/)
      ])
    }).pipe(Effect.provide(logs.layer), Effect.scoped)
  }, 30_000)

  describeUnless(withoutRedis(redisUp, "the limiter's Redis goes away and comes back"), "Redis", () => {
    it.live("Redis: one warning while it is away (limits counted in process), one info line when it answers again", () => {
      const logs = captureJson()
      return Effect.gen(function* () {
        const target = new URL(testRedisUrl)
        const proxy = yield* Effect.acquireRelease(
          Effect.promise(() => openTcpProxy({ host: target.hostname, port: Number(target.port || 6379) })),
          (p) => Effect.promise(p.close)
        )
        proxy.cut()
        const url = Redacted.make(`redis://127.0.0.1:${proxy.port}`)
        const limiter = Context.get(yield* Layer.build(RateLimiter.layerRedis(url, { perNetwork: 1000, perToken: 1000 })), RateLimiter)
        for (let i = 0; i < 10; i++) {
          expect((yield* limiter.consume(`198.51.100.${i}`, undefined)).allowed).toBe(true)
          yield* Effect.sleep(100)
        }
        const lines = logs.lines
        expect(warnings(lines).map((line) => line.message)).toEqual([expect.stringMatching(/^Redis \(rate limits counted in process meanwhile\) unavailable: /)])
        proxy.restore()
        const back = Date.now()
        while (!lines.some((line) => line.logLevel === "INFO") && Date.now() - back < 20_000) {
          yield* limiter.consume("198.51.100.200", undefined)
          yield* Effect.sleep(200)
        }
        expect(lines.filter((line) => line.logLevel === "INFO").map((line) => line.message)).toEqual([
          expect.stringMatching(/^Redis \(rate limits counted in process meanwhile\) available again after/)
        ])
        expect(warnings(lines)).toHaveLength(1)
      }).pipe(Effect.provide(logs.layer), Effect.scoped)
    }, 40_000)
  })
})

describe("a database outage", () => {
  const logs = captureJson()
  layer(BreakableServer({}, LogLevel.Info).pipe(Layer.provide(logs.layer)), { excludeTestServices: true })((it) => {
    it.effect("logs one warning however many requests fail, one info line once it answers again; its 503s are counted as database_unavailable", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const database = yield* DatabaseLink
        const unavailable = Effect.map(call("GET", "/metrics"), (reply) =>
          valueOf(parseExposition(reply.text), "http_unavailable_total", { reason: "database_unavailable" })
        )
        const before = yield* unavailable
        yield* database.cut
        for (let i = 0; i < 4; i++) {
          expect((yield* call("GET", "/api/v4/domains", { token: user.token })).status).toBe(503)
          expect((yield* call("GET", "/readyz")).status).toBe(503)
        }
        expect((yield* unavailable) - before).toBe(8)
        const aboutDatabase = () => logs.lines.filter((line) => String(line.message).startsWith("the database "))
        expect(aboutDatabase().map((line) => [line.logLevel, line.message])).toEqual([
          ["WARN", expect.stringMatching(/^the database unavailable: .+; retrying with backoff/)]
        ])
        yield* database.restore
        let ready = 503
        for (let i = 0; i < 50 && ready !== 200; i++) {
          ready = (yield* call("GET", "/readyz")).status
          if (ready !== 200) yield* Effect.sleep(200)
        }
        expect(ready).toBe(200)
        expect(aboutDatabase().map((line) => [line.logLevel, line.message])).toEqual([
          ["WARN", expect.stringMatching(/^the database unavailable: /)],
          ["INFO", expect.stringMatching(/^the database available again after \d+(\.\d)? s$/)]
        ])
      })
    )
  })
})
