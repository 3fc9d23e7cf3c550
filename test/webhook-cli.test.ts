import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { execFile, execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { embeddedClientLayer, serverClientLayer } from "../src/Sql/Database.ts"
import { at, numberAt, stringAt } from "./support/Http.ts"
import { createServerDatabase, dropServerDatabase, testServerUrl } from "./support/TestDatabase.ts"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), "links-webhook-cli-"))
const bundleDir = mkdtempSync(join(ROOT, ".vitest-webhook-cli-"))
let database: { readonly name: string; readonly url: string } | undefined

beforeAll(async () => {
  execFileSync(process.execPath, ["scripts/bundle-cli.mjs", bundleDir], { cwd: ROOT })
  if (testServerUrl !== undefined) database = await createServerDatabase(testServerUrl, "links_webhook_cli")
}, 120_000)

afterAll(async () => {
  if (testServerUrl !== undefined && database !== undefined) await dropServerDatabase(testServerUrl, database.name)
  for (const dir of [dataDir, bundleDir]) rmSync(dir, { recursive: true, force: true })
})

/** The bundled CLI in a child process on this file's database. */
const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.async<{ code: number; stdout: string; stderr: string }>((resume) => {
    const childEnv: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, TOKEN_SECRET: "cli test secret", ...env }
    for (const name of ["DATABASE_URL", "TEST_DATABASE_URL", "REDIS_URL"]) delete childEnv[name]
    if (database !== undefined) childEnv["DATABASE_URL"] = database.url
    const child = execFile(process.execPath, [join(bundleDir, "Cli", "main.js"), ...args], { cwd: ROOT, env: childEnv, timeout: 60_000 }, (error, stdout, stderr) =>
      resume(Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }))
    )
    return Effect.sync(() => child.kill())
  })

const json = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const run = yield* cli([...args, "--json"], env)
    expect(run.code, run.stderr).toBe(0)
    return JSON.parse(run.stdout) as unknown
  })

/** Statements on this file's database from the test process (embedded: only while no CLI runs). */
const query = <A extends object>(statement: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, SqlError>) =>
  Effect.suspend(() =>
    Effect.provide(
      Effect.flatMap(SqlClient.SqlClient, statement),
      database === undefined ? embeddedClientLayer(dataDir) : serverClientLayer(Redacted.make(database.url), { maxConnections: 1, applicationName: "links-webhook-cli-test" })
    )
  ).pipe(Effect.orDie)

const PRIVATE_OK = { URL_CHECK_ALLOW_PRIVATE: "true" }

describe("admin CLI: webhook commands", () => {
  it.effect("create (secret once), list, rotate-secret, deliveries, replay, delete; refusals with the API's codes", () =>
    Effect.gen(function* () {
      const account = yield* json(["account", "create", "--name", "Hooks", "--plan", "team"])
      const [domain] = yield* query((sql) => sql<{ id: number }>`INSERT INTO domains (account_id, domain) VALUES (${numberAt(account, "id")}, 'hooks.example') RETURNING id`)
      const domainId = String(domain!.id)
      const created = yield* json(["webhook", "create", "--domain", domainId, "--url", "http://127.0.0.1:9/hook", "--events", "link.created,link.clicked"], PRIVATE_OK)
      const secret = stringAt(created, "secret")
      expect(secret).toMatch(/^whsec_/)
      expect(at(created, "events")).toEqual(["link.created", "link.clicked"])
      const webhookId = String(numberAt(created, "id"))

      const listed = yield* cli(["webhook", "list", "--domain", domainId, "--json"])
      expect(listed.stdout).not.toContain(secret)
      expect(at(JSON.parse(listed.stdout), "objects", 0, "url")).toBe("http://127.0.0.1:9/hook")

      const rotated = yield* json(["webhook", "rotate-secret", "--webhook", webhookId])
      expect(stringAt(rotated, "secret")).not.toBe(secret)
      expect(typeof at(rotated, "previous_secret_until")).toBe("number")

      const [delivery] = yield* query(
        (sql) => sql<{ id: number }>`
          INSERT INTO webhook_deliveries (webhook_id, event, body, state, retry_until)
          VALUES (${Number(webhookId)}, 'link.created', '{}', 'failed', now()) RETURNING id`
      )
      const log = yield* json(["webhook", "deliveries", "--webhook", webhookId])
      expect(at(log, "objects", 0)).toMatchObject({ id: delivery!.id, state: "failed", attempts: [] })
      expect(at(log, "meta", "total")).toBe(1)
      const replayed = yield* json(["webhook", "replay", "--delivery", String(delivery!.id)])
      expect(replayed).toEqual({ id: delivery!.id, state: "pending" })

      const privateUrl = yield* cli(["webhook", "create", "--domain", domainId, "--url", "http://10.0.0.1/hook", "--events", "link.created"])
      expect([privateUrl.code, privateUrl.stderr]).toEqual([1, expect.stringContaining("10803")])
      const badEvents = yield* cli(["webhook", "create", "--domain", domainId, "--url", "https://example.com/", "--events", "link.viewed"])
      expect([badEvents.code, badEvents.stderr]).toEqual([2, expect.stringContaining("--events must be")])
      expect(yield* json(["webhook", "delete", "--webhook", webhookId])).toEqual({ deleted: Number(webhookId) })
      const again = yield* cli(["webhook", "rotate-secret", "--webhook", webhookId])
      expect([again.code, again.stderr]).toEqual([1, expect.stringContaining("10801")])
    }), 90_000)
})
