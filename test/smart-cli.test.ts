import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile, execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { createServerDatabase, dropServerDatabase, testServerUrl } from "./support/TestDatabase.ts"
import { describeUnless, withoutServer } from "./support/SkipReasons.ts"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "links-smart-cli-"))
/** The CLI as `npm run build` bundles it, in a folder of this run. */
const bundleDir = mkdtempSync(join(ROOT, ".vitest-smart-cli-"))
let database: { readonly name: string; readonly url: string } | undefined

beforeAll(async () => {
  if (testServerUrl === undefined) return
  execFileSync(process.execPath, ["scripts/bundle-cli.mjs", bundleDir], { cwd: ROOT })
  database = await createServerDatabase(testServerUrl, "links_smart_cli")
})

afterAll(async () => {
  if (testServerUrl !== undefined && database !== undefined) await dropServerDatabase(testServerUrl, database.name)
  for (const dir of [scratch, bundleDir]) rmSync(dir, { recursive: true, force: true })
})

const cli = (...args: ReadonlyArray<string>) => cliWith({}, ...args)

const cliWith = (extraEnv: Record<string, string>, ...args: ReadonlyArray<string>) =>
  Effect.async<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resume) => {
    const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: scratch, DATABASE_URL: database?.url, LOG_LEVEL: "warning", ...extraEnv }
    delete env["TEST_DATABASE_URL"]
    const child = execFile(process.execPath, [join(bundleDir, "Cli", "main.js"), ...args], { cwd: ROOT, env, timeout: 60_000 }, (error, stdout, stderr) =>
      resume(Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }))
    )
    return Effect.sync(() => child.kill())
  })

const query = (text: string, values: ReadonlyArray<unknown> = []) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: database?.url })
    await client.connect()
    try {
      return (await client.query(text, [...values])).rows
    } finally {
      await client.end()
    }
  })

describe("admin CLI: smart-link settings", () => {
  describeUnless(withoutServer("the CLI process reaches the test's database through a server"), "on a PostgreSQL server", () => {
    it.live(
      "link set-settings stores a file's settings as the API would; link settings shows them; bad input and unknown links are refused",
      () =>
        Effect.gen(function* () {
          expect((yield* cli("migrate", "--json")).code).toBe(0)
          const [account] = yield* query("INSERT INTO accounts (name, plan) VALUES ('cli', 'team') RETURNING id")
          const [user] = yield* query(
            `INSERT INTO users (account_id, email, nickname, role, password_hash, refresh_token_hash)
             VALUES ($1, 'cli@example.com', 'cli', 'account_admin', 'x', '\\x01') RETURNING id`,
            [account.id]
          )
          const [domain] = yield* query("INSERT INTO domains (account_id, domain) VALUES ($1, 'cli-smart.example') RETURNING id", [account.id])
          const [link] = yield* query(
            "INSERT INTO links (domain_id, user_id, url, alias, redirect_url) VALUES ($1, $2, 'https://example.com/', 'c', 'https://example.com/') RETURNING id",
            [domain.id, user.id]
          )
          const linkId = String(link.id)
          const file = join(scratch, "settings.json")
          writeFileSync(file, JSON.stringify({ rules: [{ when: { country: ["de"] }, url: "example.com/de" }], password: "a secret of twelve" }))
          const set = yield* cli("link", "set-settings", "--link", linkId, "--file", file, "--json")
          expect(set.stderr).toBe("")
          expect(JSON.parse(set.stdout)).toEqual({
            rules: [{ when: { country: ["DE"] }, url: "http://example.com/de" }],
            password_set: true
          })
          const shown = yield* cli("link", "settings", "--link", linkId, "--json")
          expect(JSON.parse(shown.stdout)).toEqual(JSON.parse(set.stdout))
          expect(shown.stdout).not.toContain("twelve")
          const [stored] = yield* query("SELECT password_hash FROM link_settings WHERE link_id = $1", [link.id])
          expect(String(stored.password_hash)).toMatch(/^\$argon2id\$/)

          writeFileSync(file, JSON.stringify({ split: [{ url: "https://a.example", weight: 60 }, { url: "https://b.example", weight: 60 }] }))
          const refused = yield* cli("link", "set-settings", "--link", linkId, "--file", file)
          expect(refused.code).toBe(1)
          expect(refused.stderr).toMatch(/^error: 10714 split: the weights sum to 120/)
          const missing = yield* cli("link", "settings", "--link", "999999")
          expect([missing.code, missing.stderr]).toEqual([1, "error: there is no link 999999\n"])
          const unreadable = yield* cli("link", "set-settings", "--link", linkId, "--file", join(scratch, "none.json"))
          expect(unreadable.code).toBe(1)
          expect(unreadable.stderr).toContain("is not a readable JSON file")
        }),
      120_000
    )

    it.live(
      "link set-settings takes the destination's preview tags, read on their thread from the script beside the bundle",
      () =>
        Effect.gen(function* () {
          const page = yield* Effect.acquireRelease(
            Effect.async<Server>((resume) => {
              const server = createServer((_req, res) => {
                res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
                res.end(`<title>Plain</title><meta property="og:title" content="From the CLI">`)
              })
              server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
            }),
            (server) => Effect.sync(() => server.close())
          )
          const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`
          expect((yield* cli("migrate", "--json")).code).toBe(0)
          const [account] = yield* query("INSERT INTO accounts (name, plan) VALUES ('cli tags', 'team') RETURNING id")
          const [user] = yield* query(
            `INSERT INTO users (account_id, email, nickname, role, password_hash, refresh_token_hash)
             VALUES ($1, 'cli-tags@example.com', 'clitags', 'account_admin', 'x', '\\x02') RETURNING id`,
            [account.id]
          )
          const [domain] = yield* query("INSERT INTO domains (account_id, domain) VALUES ($1, 'cli-tags.example') RETURNING id", [account.id])
          const [link] = yield* query(
            "INSERT INTO links (domain_id, user_id, url, alias, redirect_url) VALUES ($1, $2, $3, 't', $3) RETURNING id",
            [domain.id, user.id, url]
          )
          const file = join(scratch, "tags.json")
          writeFileSync(file, JSON.stringify({ max_clicks: 1000 }))
          const set = yield* cliWith({ URL_CHECK_ALLOW_PRIVATE: "true" }, "link", "set-settings", "--link", String(link.id), "--file", file, "--json")
          expect([set.code, set.stderr]).toEqual([0, ""])
          // The CLI ends the fetches under way before it exits.
          expect(yield* query("SELECT title FROM link_page_tags WHERE link_id = $1", [link.id])).toEqual([{ title: "From the CLI" }])
        }).pipe(Effect.scoped),
      120_000
    )
  })
})
