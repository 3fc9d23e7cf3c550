import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { join, resolve } from "node:path"
import { call, numberAt, stringAt } from "./support/Http.ts"
import { exitWithin, removeTempDirs, type ServiceProcess, spawnService, tempDir, waitReady } from "./support/ServiceProcess.ts"
import { BaseUrl } from "./support/TestServer.ts"

const ADMIN = { ADMIN_EMAIL: "thread@example.org", ADMIN_PASSWORD: "a long operator password 44" }
const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
const KILLER = resolve("bench/support/KillClickWorker.cjs")

afterAll(removeTempDirs)

const on = (service: ServiceProcess) => Effect.provideService(BaseUrl, service.url)

const messages = (service: ServiceProcess) =>
  service
    .stdout()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => String((JSON.parse(line) as { message?: unknown }).message))

/** Redirects of `/k` on a few keep-alive connections until `done` holds; the 301s. */
const redirectUntil = (service: ServiceProcess, domain: string, done: () => boolean) =>
  Effect.promise(async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 4 })
    let answered = 0
    const one = () =>
      new Promise<void>((resolveOne) => {
        const req = request(
          { host: "127.0.0.1", port: service.port, path: "/k", agent, headers: { host: domain, "user-agent": BROWSER } },
          (response) => {
            if (response.statusCode === 301) answered++
            response.resume()
            response.on("end", () => resolveOne())
          }
        )
        req.on("error", () => resolveOne())
        req.end()
      })
    const loop = async () => {
      while (!done()) await one()
    }
    await Promise.all([loop(), loop(), loop(), loop()])
    agent.destroy()
    return answered
  })

describe("the click writer thread", () => {
  it.scopedLive(
    "killed under load, it is started again with the clicks it had not written, and every answered click is stored once",
    () =>
      Effect.gen(function* () {
        const dataDir = tempDir()
        const marker = join(dataDir, "killed")
        const trigger = join(dataDir, "kill now")
        const env = { DATA_DIR: dataDir, LOG_LEVEL: "info", ...ADMIN }
        const service = yield* spawnService({
          ...env,
          NODE_OPTIONS: `--require ${KILLER}`,
          KILL_CLICK_WORKER_TRIGGER: trigger,
          KILL_CLICK_WORKER_MARKER: marker
        })
        yield* waitReady(service)
        const login = yield* call("POST", "/api/v4/access_token", { body: { email: ADMIN.ADMIN_EMAIL, password: ADMIN.ADMIN_PASSWORD } }).pipe(on(service))
        const token = stringAt(login.body, "access_token")
        const domain = `thread-${Date.now().toString(36)}.example`
        const created = yield* call("POST", "/api/v4/domains", { token, body: { domain } }).pipe(on(service))
        const domainId = numberAt(created.body, "objects", 0, "id")
        const link = yield* call("POST", `/api/v4/${domainId}/links`, {
          token,
          body: { url: "https://example.com/thread", alias: "k", override_404_check: 1 }
        }).pipe(on(service))
        const linkId = numberAt(link.body, "objects", 0, "id")
        expect(existsSync(marker)).toBe(false)

        // Traffic before, across and after the kill (told 1.5 s in): it ends 2 s after the marker appears.
        const started = Date.now()
        let killedAt: number | undefined
        const answered = yield* redirectUntil(service, domain, () => {
          if (Date.now() - started > 1500 && !existsSync(trigger)) writeFileSync(trigger, "")
          if (killedAt === undefined && existsSync(marker)) killedAt = Date.now()
          return killedAt !== undefined && Date.now() - killedAt > 2000
        })
        expect(answered).toBeGreaterThan(200)
        const metrics = yield* call("GET", "/metrics").pipe(on(service))
        expect(metrics.text).toMatch(/^click_worker_restarts_total 1$/m)
        expect(messages(service).some((m) => m.startsWith("the click writer thread stopped (exit code 1): started again"))).toBe(true)

        yield* service.kill("SIGTERM")
        expect(yield* exitWithin(service, 30_000)).toMatchObject({ code: 0 })

        // Read back on a fresh start over the same data: each answered click once, in the count and its rollups.
        const again = yield* spawnService(env)
        yield* waitReady(again)
        const reply = yield* call("GET", `/api/v4/${domainId}/links/${linkId}`, { token }).pipe(on(again))
        expect(numberAt(reply.body, "objects", 0, "click_count")).toBe(answered)
        const totals = yield* call("GET", `/api/v4/${domainId}/links/${linkId}/clicks`, { token }).pipe(on(again))
        expect(totals.text).toMatch(new RegExp(`"total":${answered}[,}]`))
      }),
    120_000
  )
})
