import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readdirSync } from "node:fs"
import { type IncomingMessage, request, type ServerResponse } from "node:http"
import { setTimeout as sleep } from "node:timers/promises"
import { makeNodeServer } from "../src/Platform/NodeServer.ts"
import { ShutdownState } from "../src/Platform/Shutdown.ts"
import { call, numberAt, stringAt, within } from "./support/Http.ts"
import { accepts, openRaw, parseResponse } from "./support/OpsSockets.ts"
import { exitWithin, removeTempDirs, type ServiceProcess, spawnService, tempDir, waitReady } from "./support/ServiceProcess.ts"
import { BaseUrl } from "./support/TestServer.ts"

const ADMIN = { ADMIN_EMAIL: "stop@example.org", ADMIN_PASSWORD: "a long operator password 43" }
const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"

afterAll(removeTempDirs)

/** One data folder for the whole file: a restart is much cheaper than a first start. */
const dataDir = tempDir()

const on = (service: ServiceProcess) => Effect.provideService(BaseUrl, service.url)

const status = (service: ServiceProcess, path: string) =>
  Effect.promise(() =>
    fetch(`${service.url}${path}`).then(
      (response) => ({ status: response.status, connection: response.headers.get("connection") }),
      () => ({ status: 0, connection: null })
    )
  )

const logLines = (service: ServiceProcess): ReadonlyArray<Record<string, unknown>> =>
  service
    .stdout()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line): Record<string, unknown> => JSON.parse(line))

const messages = (service: ServiceProcess) => logLines(service).map((line) => String(line["message"]))

/** A domain and a link on the service, for redirects; the admin's token. */
const shortLink = (service: ServiceProcess) =>
  Effect.gen(function* () {
    const login = yield* call("POST", "/api/v4/access_token", { body: { email: ADMIN.ADMIN_EMAIL, password: ADMIN.ADMIN_PASSWORD } })
    const token = stringAt(login.body, "access_token")
    const domain = `stop-${Date.now().toString(36)}.example`
    const created = yield* call("POST", "/api/v4/domains", { token, body: { domain } })
    const domainId = numberAt(created.body, "objects", 0, "id")
    const link = yield* call("POST", `/api/v4/${domainId}/links`, {
      token,
      body: { url: "https://example.com/stop", alias: "s", override_404_check: 1 }
    })
    return { token, domain, domainId, linkId: numberAt(link.body, "objects", 0, "id") }
  }).pipe(on(service))

/** `count` redirects of the short link, one after another on one keep-alive connection; the 301s. */
const redirects = (service: ServiceProcess, domain: string, count: number) =>
  Effect.promise(async () => {
    let answered = 0
    for (let i = 0; i < count; i++) {
      const code = await new Promise<number>((resolve) => {
        const req = request(
          { host: "127.0.0.1", port: service.port, path: "/s", headers: { host: domain, "user-agent": BROWSER } },
          (response) => {
            response.resume()
            response.on("end", () => resolve(response.statusCode ?? 0))
          }
        )
        req.on("error", () => resolve(0))
        req.end()
      })
      if (code === 301) answered++
    }
    return answered
  })

/** The link's click_count read from a fresh start of the service on the same data. */
const storedClicks = (link: { token: string; domainId: number; linkId: number }) =>
  Effect.scoped(
    Effect.gen(function* () {
      const service = yield* spawnService({ DATA_DIR: dataDir, ...ADMIN })
      yield* waitReady(service)
      const reply = yield* call("GET", `/api/v4/${link.domainId}/links/${link.linkId}`, { token: link.token }).pipe(on(service))
      const restart = messages(service)
      return { clicks: numberAt(reply.body, "objects", 0, "click_count"), restart }
    })
  )

describe("stopping the service (SIGTERM and SIGINT)", () => {
  it.scopedLive(
    "drains first: /readyz answers 503 at once, connections opened before the stop close after their next answer, those opened during the drain stay keep-alive, no idle connection is cut, the listener serves for SHUTDOWN_DRAIN_SECONDS, and a relayed copy of the signal does not cut it short",
    () =>
      Effect.gen(function* () {
        const service = yield* spawnService({ DATA_DIR: dataDir, SHUTDOWN_DRAIN_SECONDS: "2", LOG_LEVEL: "info", ...ADMIN })
        yield* waitReady(service)
        // Keep-alive connections answered before the stop, idle when it comes, as a proxy pools them.
        const opened = Date.now()
        const reused = yield* Effect.promise(() => openRaw(service.port))
        const idle = yield* Effect.promise(() => openRaw(service.port))
        for (const connection of [reused, idle]) {
          yield* Effect.promise(() => connection.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
        }
        yield* Effect.sleep("200 millis")

        const sent = Date.now()
        yield* service.kill("SIGTERM")
        yield* Effect.sleep("20 millis")
        yield* service.kill("SIGTERM")
        yield* Effect.sleep("200 millis")
        expect((yield* status(service, "/readyz")).status).toBe(503)
        // A request on a pooled connection during the drain is answered, and its answer closes it:
        // closing idle connections instead would reset a request a proxy is sending at that moment.
        yield* Effect.promise(() => reused.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
        const reusedClosed = yield* Effect.promise(() => reused.closed)
        const [, second] = reusedClosed.received.split(/(?=HTTP\/1\.1 )/)
        const answer = parseResponse(second ?? "")
        expect([answer.status, answer.headers.get("connection")]).toEqual([200, "close"])
        // A connection opened during the drain stays keep-alive (one per request would fill the
        // accept queue that the kernel resets when the listener closes).
        const late = yield* Effect.promise(() => openRaw(service.port))
        let lateReceived = ""
        late.socket.on("data", (chunk: string) => (lateReceived += chunk))
        yield* Effect.promise(() => late.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
        yield* Effect.sleep("200 millis")
        expect(parseResponse(lateReceived).headers.get("connection")).toBe("keep-alive")

        yield* Effect.sleep("1000 millis")
        expect(yield* service.hasExited).toBe(false)
        expect(yield* Effect.promise(() => accepts(service.port))).toBe(true)

        const exited = yield* exitWithin(service, 10_000)
        expect(exited, service.stdout() + service.stderr()).toMatchObject({ code: 0, signal: null })
        expect(exited.at - sent).toBeGreaterThanOrEqual(1_900)
        expect(exited.at - sent).toBeLessThan(8_000)
        // The connection left idle was not cut by the stop: it ended at the keep-alive timeout (5 s).
        const idleClosed = yield* Effect.promise(() => idle.closed)
        expect(parseResponse(idleClosed.received).status).toBe(200)
        expect(opened + idleClosed.afterMs - sent).toBeGreaterThanOrEqual(4_000)

        const lines = logLines(service)
        const ready = lines.find((line) => String(line["message"]).startsWith("ready in "))
        expect(ready).toMatchObject({ annotations: { version: expect.any(String), database: expect.stringContaining("embedded") } })
        expect(JSON.stringify(ready)).not.toContain(ADMIN.ADMIN_PASSWORD)
        expect(messages(service).some((m) => m.startsWith("stop requested: draining for 2 s"))).toBe(true)
        expect(messages(service).some((m) => m.startsWith("drain over"))).toBe(true)
        const stopped = lines.find((line) => String(line["message"]).startsWith("stopped in "))
        expect(stopped).toMatchObject({
          annotations: { requests_finished_while_stopping: 3, clicks_written: 0, clicks_spilled: 0 }
        })
        // Timed from the first signal: the 2 s drain is part of the stop.
        const seconds = Number(/^stopped in ([\d.]+) s$/.exec(String(stopped?.["message"]))?.[1])
        expect(seconds).toBeGreaterThanOrEqual(1.9)
        expect(seconds * 1000).toBeLessThanOrEqual(exited.at - sent + 100)
      }),
    60_000
  )

  it.scopedLive(
    "a second signal, a second or more after the first, ends the drain at once; the process still exits 0",
    () =>
      Effect.gen(function* () {
        const service = yield* spawnService({ DATA_DIR: dataDir, SHUTDOWN_DRAIN_SECONDS: "60", ...ADMIN })
        yield* waitReady(service)
        yield* service.kill("SIGTERM")
        yield* Effect.sleep("1200 millis")
        expect((yield* status(service, "/readyz")).status).toBe(503)
        const sent = Date.now()
        yield* service.kill("SIGINT")
        const exited = yield* exitWithin(service, 10_000)
        expect(exited, service.stdout() + service.stderr()).toMatchObject({ code: 0, signal: null })
        expect(exited.at - sent).toBeLessThan(5_000)
        expect(messages(service).some((m) => m.startsWith("drain ended by a second signal"))).toBe(true)
      }),
    60_000
  )

  it.scopedLive(
    "npm start signalled as a process group (systemd, Ctrl-C) exits 0 and loses no click; the next start finds a clean stop",
    () =>
      Effect.gen(function* () {
        const service = yield* spawnService({ DATA_DIR: dataDir, ...ADMIN }, "npm start")
        yield* waitReady(service)
        const link = yield* shortLink(service)
        const answered = yield* redirects(service, link.domain, 300)
        expect(answered).toBe(300)
        const allWritten = Effect.promise(() => fetch(`${service.url}/metrics`).then((reply) => reply.text())).pipe(
          Effect.map((text) => /^clicks_written_total 300$/m.test(text))
        )
        expect(yield* within(10_000, allWritten)).toBeLessThan(10_000)
        yield* service.killGroup("SIGTERM")
        const exited = yield* exitWithin(service, 20_000)
        expect(exited, service.stdout() + service.stderr()).toMatchObject({ code: 0, signal: null })
        // Counted from the stop's request: every click was written before it, none while stopping.
        const stopped = logLines(service).find((line) => String(line["message"]).startsWith("stopped in "))
        expect(stopped).toMatchObject({ annotations: { clicks_written: 0, clicks_spilled: 0 } })

        const { clicks, restart } = yield* storedClicks(link)
        expect(clicks).toBe(300)
        expect(restart.some((m) => m.includes("did not stop cleanly"))).toBe(false)
      }),
    120_000
  )

  it.scopedLive(
    "npm start whose npm process is killed outright: the service sees its parent gone and stops by itself",
    () =>
      Effect.gen(function* () {
        const service = yield* spawnService({ DATA_DIR: dataDir, ...ADMIN }, "npm start")
        yield* waitReady(service)
        const marker = readdirSync(dataDir).find((name) => /^running-\d+\.json$/.test(name))
        expect(marker).toBeDefined()
        yield* service.kill("SIGKILL")
        yield* service.exited
        let gone = false
        for (let i = 0; i < 100 && !gone; i++) {
          gone = !existsSync(`${dataDir}/${marker}`) && !(yield* Effect.promise(() => accepts(service.port)))
          if (!gone) yield* Effect.sleep("100 millis")
        }
        expect(gone, "the orphaned service stopped cleanly within 10 s").toBe(true)
      }),
    60_000
  )

  it.scopedLive(
    "after SIGKILL the next start says the earlier run did not stop cleanly (with DATABASE_URL set empty and LOG_LEVEL=warn)",
    () =>
      Effect.gen(function* () {
        const first = yield* spawnService({ DATA_DIR: dataDir, ...ADMIN })
        yield* waitReady(first)
        yield* first.kill("SIGKILL")
        yield* first.exited
        // Spellings operators type by habit: an empty DATABASE_URL is unset (the embedded database), warn is warning.
        const second = yield* spawnService({ DATA_DIR: dataDir, DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "warn", ...ADMIN })
        yield* waitReady(second)
        const warning = logLines(second).find((line) => String(line["message"]).includes("did not stop cleanly"))
        expect(warning).toMatchObject({ logLevel: "WARN", message: expect.stringContaining(`process ${first.pid} `) })
        expect(logLines(second).filter((line) => line["logLevel"] === "INFO")).toEqual([])
      }),
    90_000
  )
})

describe("the listener's close after a drain", () => {
  it("answers a request that comes on a connection accepted before the close, even once the API's listener is removed; leaves an idle keep-alive connection to its keep-alive timeout; closes one that brought no request after closeGrace", async () => {
    const shutdown = new ShutdownState()
    const server = makeNodeServer({ closeGrace: 300, keepAliveTimeout: 1_000 }, undefined, undefined, shutdown)
    const api = (_request: IncomingMessage, response: ServerResponse) => response.end("ok")
    server.on("request", api)
    const port = await new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        resolve(typeof address === "object" && address !== null ? address.port : 0)
      })
    )
    // A proxy's pooled connection, idle after its answer: the proxy may send on it at any moment.
    const pooled = await openRaw(port)
    await pooled.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    await sleep(50)
    const pooledIdleSince = Date.now()
    shutdown.request()
    // A proxy connected a moment before the close; its request is still on its way.
    const late = await openRaw(port)
    const quiet = await openRaw(port)
    const closing = Date.now()
    // As Effect does when its scope closes: the API's listener goes first, then the server closes.
    server.off("request", api)
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    await sleep(100)
    await late.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    const answered = await late.closed
    expect(parseResponse(answered.received)).toMatchObject({ status: 200, body: "ok" })
    expect(parseResponse(answered.received).headers.get("connection")).toBe("close")
    expect(await accepts(port)).toBe(false)
    await quiet.closed
    expect(Date.now() - closing).toBeGreaterThanOrEqual(280)
    await pooled.closed
    expect(Date.now() - pooledIdleSince).toBeGreaterThanOrEqual(900)
    await closed
  })
})
