import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { statementSummary } from "../src/Platform/StatementSpans.ts"
import { answering } from "./support/Fixtures.ts"
import { call, numberAt, stringAt, within } from "./support/Http.ts"
import { receiver as webhookReceiver } from "./support/Receiver.ts"
import { visit } from "./support/Redirects.ts"
import { exitWithin, removeTempDirs, type ServiceProcess, spawnService, tempDir, waitReady } from "./support/ServiceProcess.ts"
import { startSmtp } from "./support/Smtp.ts"
import { scopedServerDatabase, testServerUrl } from "./support/TestDatabase.ts"
import { BaseUrl } from "./support/TestServer.ts"

afterAll(removeTempDirs)

interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly name: string
  readonly kind: number
  readonly attributes: Readonly<Record<string, unknown>>
  readonly service: unknown
  /** When the receiver got it, from `Date.now()`. */
  readonly receivedAt: number
}

const record = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null ? Object.fromEntries(Object.entries(value)) : {}

const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

/** OTLP/JSON attributes as a plain record: `{key, value: {stringValue}}` becomes `key: "…"`. */
const attributesOf = (value: unknown) =>
  Object.fromEntries(
    list(value).map((entry) => {
      const attribute = record(entry)
      const typed = Object.values(record(attribute.value))[0]
      return [String(attribute.key), typeof typed === "string" && /^\d+$/.test(typed) ? Number(typed) : typed]
    })
  )

/** The spans of an OTLP/HTTP JSON export request (`ExportTraceServiceRequest`). */
const spansOf = (body: unknown, receivedAt: number): ReadonlyArray<ReceivedSpan> =>
  list(record(body).resourceSpans).flatMap((resourceSpans) => {
    const service = attributesOf(record(record(resourceSpans).resource).attributes)["service.name"]
    return list(record(resourceSpans).scopeSpans).flatMap((scopeSpans) =>
      list(record(scopeSpans).spans).map((raw): ReceivedSpan => {
        const span = record(raw)
        return {
          traceId: String(span.traceId),
          spanId: String(span.spanId),
          parentSpanId: typeof span.parentSpanId === "string" ? span.parentSpanId : "",
          name: String(span.name),
          kind: Number(span.kind),
          attributes: attributesOf(span.attributes),
          service,
          receivedAt
        }
      })
    )
  })

/**
 * A real OTLP/HTTP receiver on `port` (a free one when 0): takes `POST /v1/traces` as the collector
 * does, JSON only (the exporter's encoding), and keeps the spans; every other request is counted too.
 */
const otlpReceiver = (port = 0) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: Server; readonly url: string; readonly spans: Array<ReceivedSpan>; readonly requests: Array<string> }, Error>((resume) => {
      const spans: Array<ReceivedSpan> = []
      const requests: Array<string> = []
      const server = createServer((request: IncomingMessage, response: ServerResponse) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          requests.push(`${request.method} ${request.url} ${request.headers["content-type"]}`)
          if (request.method === "POST" && request.url === "/v1/traces" && request.headers["content-type"] === "application/json") {
            spans.push(...spansOf(JSON.parse(Buffer.concat(chunks).toString("utf8")), Date.now()))
            response.writeHead(200, { "content-type": "application/json" }).end("{}")
          } else {
            response.writeHead(415).end()
          }
        })
      })
      server.once("error", (error) => resume(Effect.fail(error)))
      server.listen(port, "127.0.0.1", () => {
        const address = server.address()
        const bound = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({ server, url: `http://127.0.0.1:${bound}`, spans, requests }))
      })
    }),
    ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  )

/** A collector that accepts connections and never answers: the worst an exporter can meet. */
const silentCollector = Effect.acquireRelease(
  Effect.async<{ readonly server: Server; readonly url: string; readonly sockets: Set<Socket> }>((resume) => {
    const sockets = new Set<Socket>()
    const server = createServer(() => undefined)
    server.on("connection", (socket) => sockets.add(socket))
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resume(Effect.succeed({ server, sockets, url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}` }))
    })
  }),
  ({ server, sockets }) =>
    Effect.async<void>((resume) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resume(Effect.void))
    })
)

const ADMIN = { ADMIN_EMAIL: "traces@example.org", ADMIN_PASSWORD: "a long tracing password 7" }

/** The service's own database: a fresh one on the test server, else embedded in the data directory. */
const database = Effect.gen(function* () {
  if (testServerUrl === undefined) return {}
  const { url } = yield* scopedServerDatabase(testServerUrl, "links_traces")
  return { DATABASE_URL: url }
})

/** The service on its own database, with an admin, the 404 check allowed to reach local sites and every redirect sampled. */
const startService = (env: Readonly<Record<string, string>>) =>
  Effect.gen(function* () {
    const service = yield* spawnService({
      DATA_DIR: tempDir(),
      ...(yield* database),
      ...ADMIN,
      URL_CHECK_ALLOW_PRIVATE: "true",
      REDIRECT_TRACE_RATIO: "1",
      ...env
    })
    yield* waitReady(service)
    return service
  })

/**
 * A receiver, a site for the 404 check, and the service exporting its spans to the receiver; nothing
 * leaves before the stop, so what arrives was flushed by it.
 */
const exportingService = (env: Readonly<Record<string, string>>) =>
  Effect.gen(function* () {
    const receiver = yield* otlpReceiver()
    const site = yield* answering(200)
    const service = yield* startService({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "600000", ...env })
    return { receiver, site, service }
  })

const on = (service: ServiceProcess) => Effect.provideService(BaseUrl, service.url)

/** Logs in as the admin and creates a short domain: the token, the domain and its id. */
const adminDomain = (prefix: string) =>
  Effect.gen(function* () {
    const login = yield* call("POST", "/api/v4/access_token", { body: { email: ADMIN.ADMIN_EMAIL, password: ADMIN.ADMIN_PASSWORD } })
    expect(login.status, login.text).toBe(200)
    const token = stringAt(login.body, "access_token")
    const domain = `${prefix}-${Date.now().toString(36)}.example`
    const created = yield* call("POST", "/api/v4/domains", { token, body: { domain } })
    expect(created.status, created.text).toBe(200)
    return { token, domain, domainId: numberAt(created.body, "objects", 0, "id") }
  })

/** Logs in, creates a short domain and a link to `target` on it (with the 404 check), and follows the link once. */
const traffic = (service: ServiceProcess, target: string) =>
  Effect.gen(function* () {
    const { token, domain, domainId } = yield* adminDomain("traces")
    // A client that also puts its token in the query: the trace must not keep it.
    const link = yield* call("POST", `/api/v4/${domainId}/links?access_token=${token}`, { token, body: { url: target, alias: "traced" } })
    expect(link.status, link.text).toBe(200)
    const redirect = yield* visit(domain, "/traced")
    expect(redirect.status).toBe(301)
    return { token, domainId }
  }).pipe(on(service))

const stop = (service: ServiceProcess, withinMs: number) =>
  Effect.gen(function* () {
    yield* service.kill("SIGTERM")
    const exited = yield* exitWithin(service, withinMs)
    expect(exited, service.stdout() + service.stderr()).toMatchObject({ code: 0, signal: null })
    return exited.at
  })

/** The chain of parents of `span` within its trace, nearest first. */
const ancestorsOf = (spans: ReadonlyArray<ReceivedSpan>, span: ReceivedSpan): ReadonlyArray<ReceivedSpan> => {
  const parent = spans.find((candidate) => candidate.traceId === span.traceId && candidate.spanId === span.parentSpanId)
  return parent === undefined ? [] : [parent, ...ancestorsOf(spans, parent)]
}

describe("OpenTelemetry traces", () => {
  it("SQL spans are named by operation and table, after the write a CTE does, never after a lock or conflict clause", () => {
    const names = [
      "SELECT extract(epoch FROM d.created) FROM domains d",
      "WITH due AS (SELECT 1 FROM a FOR UPDATE SKIP LOCKED), c AS (UPDATE click_notifications n SET pending = 0) SELECT * FROM c",
      "WITH live AS (SELECT id FROM domains), l AS (INSERT INTO links (a) SELECT 1) SELECT * FROM l",
      "WITH x AS (SELECT 1) SELECT * FROM x",
      "INSERT INTO tags VALUES (1) ON CONFLICT DO UPDATE SET a = 1",
      "  update links set a = 1",
      "DELETE FROM access_tokens WHERE user_id = $1",
      "-- Links and tags.\nCREATE TABLE links (id int)",
      "BEGIN"
    ].map((text) => statementSummary(text)?.name)
    expect(names).toEqual(["SELECT domains", "UPDATE click_notifications", "INSERT links", "SELECT x", "INSERT tags", "UPDATE links", "DELETE access_tokens", "CREATE", "BEGIN"])
    expect(statementSummary("  ")).toBeUndefined()
  })

  it.scopedLive(
    "a link creation is a server span named by route with its SQL, 404 check and hashing below it; a sampled redirect has its span; all sent when SIGTERM stops the service",
    () =>
      Effect.gen(function* () {
        const { receiver, site, service } = yield* exportingService({
          OTEL_SERVICE_NAME: "links-under-test",
          OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test"
        })
        const { token } = yield* traffic(service, site.url)
        yield* Effect.sleep("300 millis")
        expect(receiver.spans).toEqual([])
        const stoppedAt = yield* stop(service, 10_000)
        const spans = receiver.spans
        expect(spans.length).toBeGreaterThan(0)
        for (const span of spans) expect(span.receivedAt).toBeLessThanOrEqual(stoppedAt)
        expect(new Set(spans.map((span) => span.service))).toEqual(new Set(["links-under-test"]))

        const SERVER = 2
        const CLIENT = 3
        const create = spans.find((span) => span.kind === SERVER && /^POST \/api\/v4\/:\w+\/links$/.test(span.name))
        expect(create, spans.map((span) => span.name).join(", ")).toBeDefined()
        expect(create!.parentSpanId).toBe("")
        expect(create!.attributes["http.route"]).toMatch(/^\/api\/v4\/:\w+\/links$/)
        expect(create!.attributes["http.response.status_code"]).toBe(200)
        // The token sent in the query stays out of the trace.
        expect(JSON.stringify(spans)).not.toContain(token)
        expect(create!.attributes["url.query"]).toBe("access_token=REDACTED")
        const below = spans.filter((span) => ancestorsOf(spans, span).includes(create!))

        const check = below.find((span) => span.name === "url_check")
        expect(check, below.map((span) => span.name).join(", ")).toBeDefined()
        expect(check!.attributes["url_check.result"]).toBe("ok")
        const head = below.find((span) => span.parentSpanId === check!.spanId)
        expect(head).toMatchObject({ name: "HEAD", kind: CLIENT, attributes: { "http.response.status_code": 200, "url.full": site.url } })

        const statements = below.filter((span) => span.attributes["db.system.name"] === "postgresql")
        expect(statements.length).toBeGreaterThan(0)
        for (const statement of statements) {
          expect(statement.kind).toBe(CLIENT)
          expect(statement.traceId).toBe(create!.traceId)
          expect(statement.attributes["db.query.text"]).toEqual(expect.any(String))
          expect(statement.name).toMatch(/^[A-Z]+/)
        }
        expect(statements.map((span) => span.name)).toContain("INSERT links")

        const login = spans.find((span) => span.kind === SERVER && span.name === "POST /api/v4/access_token")
        expect(login).toBeDefined()
        expect(spans.some((span) => span.name === "password.verify" && span.parentSpanId === login!.spanId)).toBe(true)

        const redirect = spans.find((span) => span.name === "GET /:alias")
        expect(redirect).toMatchObject({ kind: SERVER, parentSpanId: "", attributes: { "http.route": "/:alias", "url.path": "/traced", "http.response.status_code": 301 } })

        // Probes are not traced, and statements of no request are not either.
        expect(spans.filter((span) => span.name.includes("readyz"))).toEqual([])
        expect(spans.filter((span) => span.parentSpanId === "" && span.attributes["db.system.name"] !== undefined)).toEqual([])
      }),
    120_000
  )

  it.scopedLive(
    "a click e-mail is a client span `smtp send` below a `click_email` span of the link, in no request's trace; a webhook delivery is a span with its POST (host, port, status) and its record below it",
    () =>
      Effect.gen(function* () {
        const smtp = yield* Effect.acquireRelease(Effect.promise(startSmtp), (server) => Effect.sync(server.close))
        const hooks = yield* webhookReceiver()
        const { receiver, site, service } = yield* exportingService({
          SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
          MAIL_FROM: "links@sho.rt",
          WEBHOOK_POLL_MILLIS: "100"
        })
        const linkId = yield* Effect.gen(function* () {
          const { token, domain, domainId } = yield* adminDomain("mail")
          const hook = yield* call("POST", `/api/v4/${domainId}/webhooks`, { token, body: { url: hooks.url, events: ["link.created"] } })
          expect(hook.status, hook.text).toBe(200)
          const link = yield* call("POST", `/api/v4/${domainId}/links`, { token, body: { url: site.url, alias: "mailed", notify_on_click: 1 } })
          expect(link.status, link.text).toBe(200)
          expect((yield* visit(domain, "/mailed")).status).toBe(301)
          return numberAt(link.body, "objects", 0, "id")
        }).pipe(on(service))
        // The notifier sends what is due every 5 s.
        const took = yield* within(20_000, Effect.sync(() => smtp.received.length > 0 && hooks.received.length > 0))
        expect(took, `${smtp.received.length} e-mails, ${hooks.received.length} webhook requests`).toBeLessThan(20_000)
        yield* stop(service, 10_000)
        const spans = receiver.spans
        const CLIENT = 3

        const mail = spans.find((span) => span.name === "smtp send")
        expect(mail, spans.map((span) => span.name).join(", ")).toMatchObject({
          kind: CLIENT,
          attributes: { "server.address": "127.0.0.1", "server.port": smtp.port }
        })
        // Sent by the notifier's loop, not by the request whose click it reports: below the e-mail's own root span.
        const email = spans.find((span) => span.spanId === mail!.parentSpanId)
        expect(email, spans.map((span) => `${span.name} ${span.spanId} < ${span.parentSpanId}`).join(", ")).toMatchObject({
          name: "click_email",
          parentSpanId: "",
          attributes: { "click_email.link_id": linkId, "click_email.clicks": 1 }
        })
        expect(spans.filter((span) => span.traceId === mail!.traceId).map((span) => span.name).sort()).toEqual(["click_email", "smtp send"])

        const delivery = spans.find((span) => span.name === "webhook_delivery")
        expect(delivery, spans.map((span) => span.name).join(", ")).toMatchObject({
          parentSpanId: "",
          attributes: { "webhook.event": "link.created", "webhook.attempt": 1, "webhook.delivery.id": expect.any(Number) }
        })
        const below = spans.filter((span) => span.parentSpanId === delivery!.spanId)
        const post = below.find((span) => span.name === "POST")
        const hookUrl = new URL(hooks.url)
        expect(post, below.map((span) => span.name).join(", ")).toMatchObject({
          kind: CLIENT,
          attributes: { "http.request.method": "POST", "server.address": "127.0.0.1", "server.port": Number(hookUrl.port), "http.response.status_code": 200 }
        })
        // A receiver's path and query may hold its credentials: the span names only the host.
        expect(JSON.stringify(post!.attributes)).not.toContain(hookUrl.pathname)
        expect(post!.attributes["error.type"]).toBeUndefined()
        // The attempt's record, in its transaction, is in the delivery's trace too.
        const recorded = spans.filter((span) => ancestorsOf(spans, span).includes(delivery!)).map((span) => span.name)
        expect(recorded).toContain("UPDATE webhook_deliveries")
      }),
    120_000
  )

  it.scopedLive(
    "a collector that never answers slows no request, is warned about once, and the stop waits for it at most a few seconds",
    () =>
      Effect.gen(function* () {
        const collector = yield* silentCollector
        const site = yield* answering(200)
        const service = yield* startService({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: "50" })
        const started = Date.now()
        yield* traffic(service, site.url)
        for (let i = 0; i < 20; i++) {
          const reply = yield* call("GET", "/healthz").pipe(on(service))
          expect(reply.status).toBe(200)
          yield* Effect.sleep("50 millis")
        }
        expect(Date.now() - started).toBeLessThan(5_000)
        expect(collector.sockets.size).toBeGreaterThan(0)
        // The first export gives up after 5 s: one warning, whatever the exports after it.
        const warned = () => service.stdout().split("\n").filter((line) => line.includes("the OpenTelemetry collector (spans dropped meanwhile) unavailable"))
        for (let waited = 0; warned().length === 0 && waited < 10_000; waited += 200) yield* Effect.sleep("200 millis")
        expect(warned(), service.stdout()).toHaveLength(1)
        expect(JSON.parse(warned()[0]!)).toMatchObject({ logLevel: "WARN" })
        const stopping = Date.now()
        const stoppedAt = yield* stop(service, 15_000)
        expect(stoppedAt - stopping).toBeLessThan(8_000)
      }),
    120_000
  )

  it.scopedLive(
    "unset, nothing is exported, not even to the default endpoint, whatever other OTEL_ variables say",
    () =>
      Effect.gen(function* () {
        // The exporter's default is http://localhost:4318: a receiver there catches any export.
        const receiver = yield* otlpReceiver(4318)
        const site = yield* answering(200)
        const service = yield* startService({ OTEL_SERVICE_NAME: "links-untraced", OTEL_TRACES_SAMPLER: "always_on", OTEL_BSP_SCHEDULE_DELAY: "50" })
        expect(service.stdout()).toContain("off (OTEL_EXPORTER_OTLP_ENDPOINT unset)")
        yield* traffic(service, site.url)
        yield* Effect.sleep("300 millis")
        yield* stop(service, 10_000)
        expect(receiver.requests).toEqual([])
      }),
    120_000
  )
})
