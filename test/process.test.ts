import { SqlClient } from "@effect/sql"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { serverClientLayer } from "../src/Sql/Database.ts"
import { loadMigrations, migrate } from "../src/Sql/Migrator.ts"
import { at, call, numberAt, stringAt } from "./support/Http.ts"
import { accepts, openRaw, parseResponse } from "./support/OpsSockets.ts"
import {
  exitWithin,
  removeTempDirs,
  runToExit,
  type ServiceProcess,
  spawnService,
  tempDir,
  waitReady
} from "./support/ServiceProcess.ts"
import { makeTestDatabase, scopedServerDatabase, testServerUrl } from "./support/TestDatabase.ts"
import { BaseUrl } from "./support/TestServer.ts"
import { describeUnless, withoutServer } from "./support/SkipReasons.ts"

const on = (service: ServiceProcess) => Effect.provideService(BaseUrl, service.url)

const login = (service: ServiceProcess, email: string, password: string) =>
  call("POST", "/api/v4/access_token", { body: { email, password } }).pipe(on(service))

const GENERATED = /admin (\S+) with the generated password (\S+)/

const ADMIN = { ADMIN_EMAIL: "ops@example.org", ADMIN_PASSWORD: "a long operator password 42" }

/** Shared by the tests that start with ADMIN_*: a restart is much cheaper than a first start. */
const adminDataDir = tempDir()

afterAll(removeTempDirs)

/** Stops the service with SIGTERM and expects it to exit with code 0 within 10 s. */
const stopCleanly = (service: ServiceProcess) =>
  Effect.gen(function* () {
    yield* service.kill("SIGTERM")
    const exited = yield* exitWithin(service, 10_000)
    expect(exited, service.stdout() + service.stderr()).toMatchObject({ code: 0, signal: null })
  })

describe("the service process", () => {
  it.scopedLive(
    "first start on an empty data directory prints a generated admin password once; data and tokens survive a restart",
    () =>
      Effect.gen(function* () {
        const dataDir = tempDir()
        const first = yield* spawnService({ DATA_DIR: dataDir })
        yield* waitReady(first)
        const generated = GENERATED.exec(first.stdout())
        expect(generated, first.stdout()).not.toBeNull()
        expect(first.stdout().match(/generated password/g)).toHaveLength(1)
        const [, email, password] = generated!
        const reply = yield* login(first, email!, password!)
        expect(reply.status).toBe(200)
        const token = stringAt(reply.body, "access_token")
        const domain = `first-start-${randomBytes(3).toString("hex")}.example`
        const created = yield* call("POST", "/api/v4/domains", { token, body: { domain } }).pipe(on(first))
        expect(created.status).toBe(200)
        const id = numberAt(created.body, "objects", 0, "id")
        yield* stopCleanly(first)

        const second = yield* spawnService({ DATA_DIR: dataDir })
        yield* waitReady(second)
        expect(second.stdout()).not.toMatch(/password/i)
        const found = yield* call("GET", `/api/v4/domains/${id}`, { token }).pipe(on(second))
        expect(found.status).toBe(200)
        expect(found.body).toMatchObject({ objects: [{ id, domain }] })
        expect(stringAt((yield* login(second, email!, password!)).body, "access_token")).toBe(token)
        yield* stopCleanly(second)
      }),
    90_000
  )

  it.scopedLive(
    "ADMIN_EMAIL and ADMIN_PASSWORD choose the first admin, and no password is printed",
    () =>
      Effect.gen(function* () {
        const service = yield* spawnService({ DATA_DIR: adminDataDir, ...ADMIN })
        yield* waitReady(service)
        expect(service.stdout()).not.toContain("generated password")
        expect(service.stdout()).not.toContain(ADMIN.ADMIN_PASSWORD)
        expect((yield* login(service, ADMIN.ADMIN_EMAIL, ADMIN.ADMIN_PASSWORD)).status).toBe(200)
        expect((yield* login(service, "admin@example.com", ADMIN.ADMIN_PASSWORD)).status).toBe(401)
        yield* stopCleanly(service)
      }),
    60_000
  )

  it.live(
    "an invalid setting stops the process with a non-zero exit and a message naming the variable",
    () =>
      Effect.gen(function* () {
        // Every problem is reported at once, so two runs cover the five cases (PORT can only be wrong once).
        const runs = [
          { PORT: "abc", LOG_LEVEL: "loud", TRUST_PROXY: "nonsense" },
          { PORT: "70000", RATE_LIMIT_PER_SECOND: "0" }
        ]
        const results = yield* Effect.forEach(runs, (env) => runToExit({ DATA_DIR: tempDir(), ...env }), {
          concurrency: "unbounded"
        })
        runs.forEach((env, i) => {
          const result = results[i]!
          const output = result.stderr + result.stdout
          expect(result.code, output).not.toBe(0)
          expect(result.code, output).not.toBeNull()
          expect(output).not.toContain("Listening")
          for (const [name, value] of Object.entries(env)) expect(output, `${name}=${value}`).toContain(`${name}: `)
        })
      }),
    60_000
  )

  it.live(
    "a DATA_DIR that cannot be kept private (a file) stops the process with exit code 2 and says why",
    () =>
      Effect.gen(function* () {
        const file = join(tempDir(), "not-a-folder")
        writeFileSync(file, "")
        const result = yield* runToExit({ DATA_DIR: file })
        expect(result.code, result.stderr).toBe(2)
        expect(result.stderr).toContain(`configuration error: DATA_DIR ${file} cannot be kept private`)
      }),
    60_000
  )

  const drainTest = (signal: NodeJS.Signals, logLevel: "info" | "warning") =>
    Effect.gen(function* () {
      const service = yield* spawnService({ DATA_DIR: adminDataDir, LOG_LEVEL: logLevel, ...ADMIN })
      yield* waitReady(service)
      const idle = yield* Effect.promise(() => openRaw(service.port))
      yield* Effect.promise(() => idle.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
      const body = JSON.stringify({ email: ADMIN.ADMIN_EMAIL, password: ADMIN.ADMIN_PASSWORD })
      const half = Math.floor(body.length / 2)
      const inFlight = yield* Effect.promise(() => openRaw(service.port))
      yield* Effect.promise(() =>
        inFlight.write(
          `POST /api/v4/validate_login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, half)}`
        )
      )
      yield* Effect.sleep("300 millis")

      const sent = Date.now()
      yield* service.kill(signal)
      let refused = false
      for (let i = 0; i < 40 && !refused; i++) {
        refused = !(yield* Effect.promise(() => accepts(service.port)))
        if (!refused) yield* Effect.sleep("50 millis")
      }
      expect(refused, "new connections are refused after the signal").toBe(true)
      expect(yield* service.hasExited).toBe(false)

      yield* Effect.promise(() => inFlight.write(body.slice(half)))
      const answered = parseResponse((yield* Effect.promise(() => inFlight.closed)).received)
      expect(answered.status).toBe(200)
      expect(answered.headers.get("connection")).toBe("close")
      expect(JSON.parse(answered.body)).toMatchObject({ success: 1, user: { email: ADMIN.ADMIN_EMAIL } })
      // The idle connection is not cut by the stop (its client may be sending on it): it ends at the
      // keep-alive timeout, 5 s after its answer.
      const idleClosed = yield* Effect.promise(() => idle.closed)
      expect(parseResponse(idleClosed.received).status).toBe(200)
      expect(idleClosed.afterMs).toBeGreaterThanOrEqual(4_500)

      const exited = yield* exitWithin(service, 10_000)
      expect(exited, service.stdout() + service.stderr()).toMatchObject({ code: 0, signal: null })
      expect(exited.at - sent).toBeLessThan(8_000)

      const lines = service.stdout().split("\n").filter((line) => line.trim() !== "")
      const logs: ReadonlyArray<unknown> = lines.map((line) => JSON.parse(line))
      expect(logs.every((log) => typeof at(log, "message") === "string")).toBe(true)
      const levels = new Set(logs.map((log) => at(log, "logLevel")))
      if (logLevel === "info") {
        expect(logs.find((log) => at(log, "message") === "Sent HTTP response")).toMatchObject({ logLevel: "INFO" })
      } else {
        expect(levels.has("INFO") || levels.has("DEBUG")).toBe(false)
      }
    })

  it.scopedLive(
    "SIGTERM: new connections are refused, the in-flight request completes, the process exits 0 (JSON logs at info)",
    () => drainTest("SIGTERM", "info"),
    60_000
  )

  it.scopedLive(
    "SIGINT: the same drain, and LOG_LEVEL=warning keeps info lines out of the log",
    () => drainTest("SIGINT", "warning"),
    60_000
  )
})

describe("migrations and the first admin with several instances", () => {
  it.scopedLive(
    "migrations apply once: a second run applies nothing, and concurrent runs split the work",
    () =>
      Effect.gen(function* () {
        const all = loadMigrations().map((m) => m.id)
        const context = yield* Layer.build(makeTestDatabase())
        const once = yield* Effect.provide(Effect.all([migrate, migrate], { concurrency: 2 }), context)
        expect([...once[0], ...once[1]].sort((a, b) => a - b)).toEqual(all)
        expect(yield* Effect.provide(migrate, context)).toEqual([])
        const sql = yield* Effect.provide(SqlClient.SqlClient, context)
        const rows = yield* sql<{ id: number }>`SELECT id FROM schema_migrations ORDER BY id`
        expect(rows.map((row) => row.id)).toEqual(all)
      }),
    60_000
  )

  describeUnless(withoutServer("two processes share one database"), "on a PostgreSQL server", () => {
    it.scopedLive(
      "two instances started at once on one fresh PostgreSQL database: both serve, one migration run, one admin",
      () =>
        Effect.gen(function* () {
          const server = testServerUrl!
          const { url } = yield* scopedServerDatabase(server, "links_proc")
          const env = { DATABASE_URL: url, TOKEN_SECRET: "shared secret of both instances" }
          const instances = yield* Effect.all(
            [spawnService({ ...env, DATA_DIR: tempDir() }), spawnService({ ...env, DATA_DIR: tempDir() })],
            { concurrency: 2 }
          )
          yield* Effect.forEach(instances, (instance) => waitReady(instance), { concurrency: 2 })
          const printed = instances.map((instance) => GENERATED.exec(instance.stdout()))
          expect(printed.filter((match) => match !== null)).toHaveLength(1)
          const [, email, password] = printed.find((match) => match !== null)!
          for (const instance of instances) expect((yield* login(instance, email!, password!)).status).toBe(200)

          const database = yield* Layer.build(serverClientLayer(Redacted.make(url), { maxConnections: 1 }))
          const sql = yield* Effect.provide(SqlClient.SqlClient, database)
          const migrations = yield* sql<{ id: number }>`SELECT id FROM schema_migrations ORDER BY id`
          expect(migrations.map((row) => row.id)).toEqual(loadMigrations().map((m) => m.id))
          const [counts] = yield* sql<{ users: number; accounts: number }>`
            SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM accounts)::int AS accounts`
          expect(counts).toEqual({ users: 1, accounts: 1 })
          yield* Effect.forEach(instances, (instance) => stopCleanly(instance), { concurrency: 2 })
        }),
      90_000
    )
  })
})
