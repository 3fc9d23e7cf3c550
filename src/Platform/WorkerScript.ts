import { readdirSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"

const here = import.meta.url
const sources = new URL("../", here)

/** The newest modification time of the files under `dir`. */
const newest = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
    const path = join(dir, entry.name)
    return Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }, 0)

/** The build in `dist/` of a source file, when it is newer than every source file: it starts faster. */
const freshBuild = (source: URL): URL | undefined => {
  if (!source.href.startsWith(sources.href)) return undefined
  const built = new URL(`../../dist/${source.href.slice(sources.href.length).replace(/\.ts$/, ".js")}`, here)
  try {
    return statSync(built).mtimeMs >= newest(fileURLToPath(sources)) ? built : undefined
  } catch {
    return undefined
  }
}

// Otherwise the thread registers tsx's loader before it imports the sources: on Node 20 a worker
// does not inherit the loader of `--import tsx`.
const FROM_SOURCES = `
const { workerData } = require("node:worker_threads")
import(workerData.tsxApi).then(({ register }) => {
  register()
  return import(workerData.entry)
})
`

/**
 * A thread running the module `name` that sits beside `caller` (its `import.meta.url`): built, when
 * the service runs from `dist/` (the CLI's bundle ships it beside itself too); from the sources
 * (tests, `npm run dev`), through the build in `dist/` when that is fresh, else through tsx.
 */
export const startWorker = (caller: string, name: string, workerData: object = {}): Worker => {
  if (!caller.endsWith(".ts")) return new Worker(new URL(`./${name}.js`, caller), { workerData })
  const source = new URL(`./${name}.ts`, caller)
  const built = freshBuild(source)
  if (built !== undefined) return new Worker(built, { workerData })
  const tsx = dirname(createRequire(here).resolve("tsx/package.json"))
  const tsxApi = pathToFileURL(join(tsx, "dist/esm/api/index.mjs")).href
  return new Worker(FROM_SOURCES, { eval: true, workerData: { ...workerData, tsxApi, entry: source.href } })
}
