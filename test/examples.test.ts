/**
 * The examples of `examples/` as an embedder runs them (issue #17): the package packed with
 * `npm pack`, installed with `npm install <tarball>` into a project of its own, type-checked, then
 * (a) the Layers over the project's own PgClient, (b) a typed client against the whole server run by
 * the project, (c) the project's @effect/vitest tests on the testing Layers, each on a database of
 * the PostgreSQL server created and dropped here.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFile, spawn } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { REPO } from "./support/ServiceProcess.ts"
import { describeUnless, withoutServer } from "./support/SkipReasons.ts"
import { createServerDatabase, dropServerDatabase, testServerUrl } from "./support/TestDatabase.ts"

const run = promisify(execFile)
const serverUrl = testServerUrl ?? ""
const work = mkdtempSync(join(tmpdir(), "links-examples-"))
const project = join(work, "project")
const databases: Array<string> = []

/** The environment of a child: this one without what `npm test` tells its own script. */
const childEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("npm_lifecycle_") && !name.startsWith("npm_package_"))),
  ...extra
})

const inProject = (file: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  run(file, args, { cwd: project, env: childEnv(env), maxBuffer: 64 * 1024 * 1024 })

const database = async (prefix: string) => {
  const created = await createServerDatabase(serverUrl, prefix)
  databases.push(created.name)
  return created.url
}

beforeAll(async () => {
  // The global setup rebuilt dist/ from the sources; prepack would clean and build it again.
  const packed = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: REPO, env: childEnv() })
  const entries: ReadonlyArray<{ readonly filename: string }> = JSON.parse(packed.stdout)
  const filename = entries[0]!.filename
  cpSync(join(REPO, "examples"), project, { recursive: true, filter: (path) => !/[/\\](node_modules|out)$/.test(path) })
  await inProject("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", join(work, filename)])
  await inProject(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "."])
}, 300_000)

afterAll(async () => {
  for (const name of databases) await dropServerDatabase(serverUrl, name)
  rmSync(work, { recursive: true, force: true })
})

describe.concurrent("the examples, on the packed package", () => {
  it("installs only the entry points: internal modules are not importable", async () => {
    const manifest: { readonly exports: Record<string, unknown> } = JSON.parse(readFileSync(join(project, "node_modules/link-shortener/package.json"), "utf8"))
    expect(Object.keys(manifest.exports)).toEqual([".", "./api", "./errors", "./schemas", "./testing", "./heap-flags", "./package.json"])
    const internal = inProject(process.execPath, ["--input-type=module", "-e", "await import('link-shortener/dist/App.js')"])
    await expect(internal).rejects.toThrow(/ERR_PACKAGE_PATH_NOT_EXPORTED/)
  })

  describeUnless(withoutServer("the examples embed the service over a PgClient of their own"), "over the project's PgClient", () => {
    it("(a) creates a domain and a link through the Layers, records a click and reads it back", async () => {
      const url = await database("links_example_a")
      const { stderr } = await inProject(process.execPath, ["out/src/embed.js"], { DATABASE_URL: url, DATA_DIR: join(work, "data-a") })
      expect(stderr).toBe("")
    }, 120_000)

    it("(b) a typed client logs in, creates a link and reads its report from the server the project runs", async () => {
      const url = await database("links_example_b")
      const admin = { LINKS_EMAIL: "admin@example.com", LINKS_PASSWORD: "an example password" }
      const server = spawn(process.execPath, ["out/src/server.js"], {
        cwd: project,
        env: childEnv({
          DATABASE_URL: url,
          DATA_DIR: join(work, "data-b"),
          PORT: "0",
          HOST: "127.0.0.1",
          SHUTDOWN_DRAIN_SECONDS: "0",
          ADMIN_EMAIL: admin.LINKS_EMAIL,
          ADMIN_PASSWORD: admin.LINKS_PASSWORD
        }),
        stdio: ["ignore", "pipe", "pipe"]
      })
      const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)))
      try {
        const address = await new Promise<string>((resolve, reject) => {
          let output = ""
          server.stdout.on("data", (chunk: Buffer) => {
            output += chunk.toString()
            const found = /listening on (http:\/\/\S+)/.exec(output)
            if (found !== null) resolve(found[1]!)
          })
          void exited.then((code) => reject(new Error(`the server exited (${code}) before listening:\n${output}`)))
        })
        const { stdout } = await inProject(process.execPath, ["out/src/client.js"], { LINKS_URL: address, ...admin })
        expect(stdout).toContain("created http://")
      } finally {
        server.kill("SIGTERM")
      }
      expect(await exited).toBe(0)
    }, 120_000)
  })

  it("(c) the project's own @effect/vitest tests run on the testing Layers with TestClock", async () => {
    const { stdout } = await inProject(process.execPath, ["node_modules/vitest/vitest.mjs", "run"], { CI: "true", NO_COLOR: "1" })
    expect(stdout).toMatch(/Tests\s+2 passed/)
  }, 600_000)
})
