import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), "links-cli-bundle-"))
/** The CLI as `npm run build` bundles it, in a folder of this run. */
const bundleDir = mkdtempSync(join(ROOT, ".vitest-cli-bundle-"))
const cacheFile = join(bundleDir, "Cli", "run.cjs.cache")

beforeAll(() => {
  execFileSync(process.execPath, ["scripts/bundle-cli.mjs", bundleDir], { cwd: ROOT })
}, 180_000)

afterAll(() => {
  for (const dir of [dataDir, bundleDir]) rmSync(dir, { recursive: true, force: true })
})

describe("the CLI's bundle", () => {
  it("ships a code cache this Node accepts, made from a command's run", () => {
    const built = readFileSync(cacheFile)
    // The loader rewrites a cache V8 refuses (or one missing) when the command ends.
    const run = spawnSync(process.execPath, [join(bundleDir, "Cli", "main.js"), "user", "list", "--json"], {
      cwd: ROOT,
      env: { PATH: process.env["PATH"] ?? "", DATA_DIR: dataDir, DATABASE_URL: "postgres://cli@127.0.0.1:1/none", LOG_LEVEL: "none" },
      encoding: "utf8",
      timeout: 60_000
    })
    expect(run.status).toBe(1)
    expect(JSON.parse(run.stdout)).toEqual({ error: expect.stringMatching(/^cannot connect to the database: /) })
    expect(readFileSync(cacheFile).equals(built)).toBe(true)
  }, 90_000)

  it("holds the modules of effect that the CLI imports, not all of its index", () => {
    const bundle = readFileSync(join(bundleDir, "Cli", "run.cjs"), "utf8")
    // fast-check is one of the index's modules (effect/FastCheck) that no command uses.
    expect(bundle).not.toContain("fast-check")
    expect(bundle.length).toBeLessThan(700_000)
  })
})
