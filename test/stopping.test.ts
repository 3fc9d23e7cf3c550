import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readdirSync } from "node:fs"
import { request } from "node:http"
import { call, numberAt, stringAt } from "./support/Http.ts"
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
    "drains first: /readyz answers 503 at once, answers close their connections, idle ones are closed, the listener serves for SHUTDOWN_DRAIN_SECONDS, and a relayed copy of the signal does not cut it short",
    () =>
      Effect.gen(function* () {
        const service = yield* spawnService({ DATA_DIR: dataDir, SHUTDOWN_DRAIN_SECONDS: "2", LOG_LEVEL: "info", ...ADMIN })
        yield* waitReady(service)
        const idle = yield* Effect.promise(() => openRaw(service.port))
        yield* Effect.promise(() => idle.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
        yield* Effect.sleep("200 millis")

        const sent = Date.now()
        yield* service.kill("SIGTERM")
        yield* Effect.sleep("20 millis")
        yield* service.kill("SIGTERM")
        yield* Effect.sleep("200 millis")
        expect(yield* status(service, "/readyz")).toEqual({ status: 503, connection: "close" })
        expect(yield* status(service, "/healthz")).toEqual({ status: 200, connection: "close" })
        const idleClosed = yield* Effect.promise(() => idle.closed)
        expect(parseResponse(idleClosed.received).status).toBe(200)
        expect(idleClosed.afterMs).toBeLessThan(1_000)

        yield* Effect.sleep("1200 millis")
        expect(yield* service.hasExited).toBe(false)
        expect(yield* Effect.promise(() => accepts(service.port))).toBe(true)

        const exited = yield* exitWithin(service, 10_000)
        expect(exited, service.stdout() + service.stderr()).toMatchObject({ code: 0, signal: null })
        expect(exited.at - sent).toBeGreaterThanOrEqual(1_900)
        expect(exited.at - sent).toBeLessThan(6_000)

        const lines = logLines(service)
        const ready = lines.find((line) => String(line["message"]).startsWith("ready in "))
        expect(ready).toMatchObject({ annotations: { version: expect.any(String), database: expect.stringContaining("embedded") } })
        expect(JSON.stringify(ready)).not.toContain(ADMIN.ADMIN_PASSWORD)
        expect(messages(service).some((m) => m.startsWith("stop requested: draining for 2 s"))).toBe(true)
        expect(messages(service).some((m) => m.startsWith("drain over"))).toBe(true)
        const stopped = lines.find((line) => String(line["message"]).startsWith("stopped in "))
        expect(stopped).toMatchObject({
          annotations: { requests_finished_while_stopping: 2, clicks_written: 0, clicks_spilled: 0 }
        })
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
        yield* service.killGroup("SIGTERM")
        const exited = yield* exitWithin(service, 20_000)
        expect(exited, service.stdout() + service.stderr()).toMatchObject({ code: 0, signal: null })
        expect(messages(service).some((m) => m.startsWith("stopped in "))).toBe(true)

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
