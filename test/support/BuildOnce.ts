import { execFileSync } from "node:child_process"
import { readdirSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const REPO = fileURLToPath(new URL("../../", import.meta.url))

const newest = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
    const path = join(dir, entry.name)
    return Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }, 0)

const modified = (path: string) => {
  try {
    return statSync(path).mtimeMs
  } catch {
    return undefined
  }
}

/**
 * Vitest's global setup: `npm start` runs the build in `dist/` (tests of the process as npm starts it
 * use it), so it is rebuilt first when a source file changed since, the CLI's bundle too; a fresh
 * install has just built it.
 */
export default function buildOnce() {
  const built = modified(join(REPO, "dist", "main.js"))
  const sources = Math.max(
    newest(join(REPO, "src")),
    ...["tsconfig.json", "tsconfig.build.json", "package.json"].map((file) => modified(join(REPO, file)) ?? 0)
  )
  if (built !== undefined && built >= sources) return
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: REPO, stdio: "inherit" })
  // As `npm run build` does: tsc's dist/cli.js would load the CLI's modules one by one, slowly.
  execFileSync(process.execPath, ["scripts/bundle-cli.mjs"], { cwd: REPO, stdio: "inherit" })
}
