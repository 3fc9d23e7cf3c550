// The admin CLI as `npm run build` ships it (README "Admin CLI", speed), in two files:
// - dist/Cli/main.js, the entry (src/cli.ts): it answers --help and --version itself and loads
//   nothing else for them;
// - dist/Cli/run.cjs, the rest (src/Cli/Main.ts and all it uses), one CommonJS script that the
//   entry compiles with V8's code cache, run.cjs.cache, stored here (src/Cli/CompiledBundle.ts).
// dist/cli.js, tsc's entry, is replaced by a line that loads the bundle. Bundles sit one folder below
// dist/, as the modules they hold do, so that their paths to sql/ and package.json stay right. Given
// a folder (directly under the repository, as the tests do), the bundle goes to its Cli/ and dist/ is
// left alone.
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve, sep } from "node:path"

const folder = process.argv[2]
const outdir = join(folder ?? "dist", "Cli")

// Chunks of the earlier bundle layout, which nothing loads any more.
mkdirSync(outdir, { recursive: true })
for (const name of readdirSync(outdir, { withFileTypes: true }).map((entry) => entry.name)) {
  if (name.startsWith("chunk-")) rmSync(join(outdir, name))
}

/** pg asks whether it runs on Cloudflare Workers by making a `Response`, which loads Node's fetch (~90 ms): the CLI runs on Node. */
const nodeOnlyPg = {
  name: "node-only-pg",
  setup(build) {
    build.onLoad({ filter: /[\\/]pg[\\/]lib[\\/]stream\.js$/ }, (args) => {
      const source = readFileSync(args.path, "utf8")
      const patched = source.replace("if (isCloudflareRuntime()) {", "if (false) {")
      if (patched === source) throw new Error(`${args.path} changed: its Cloudflare check is not where the CLI's bundle expects it`)
      return { contents: patched, loader: "js" }
    })
  }
}

/** src/cli.ts loads the bundled Main.ts (Bundled.ts) rather than the module itself. */
const bundledMain = {
  name: "bundled-main",
  setup(build) {
    build.onResolve({ filter: /^\.\/Cli\/Main\.ts$/ }, () => ({ path: resolve("src/Cli/Bundled.ts") }))
  }
}

/** The names `effect`'s index exports from `effect/Function` rather than as a module of their own. */
const FUNCTION_EXPORTS = new Set(["absurd", "flow", "hole", "identity", "pipe", "unsafeCoerce"])

/**
 * `import { Effect, Schema } from "effect"` in src/ as `import * as Effect from "effect/Effect"` and so
 * on: the index would evaluate every module of `effect` (fast-check too, ~590 modules) before any
 * command, since the bundle wraps them lazily for the commands' `import()`.
 */
const effectModules = {
  name: "effect-modules",
  setup(build) {
    const sources = resolve("src") + sep
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (!args.path.startsWith(sources)) return undefined
      const source = readFileSync(args.path, "utf8")
      // Lines stay where they were, for the source map.
      const rewritten = source.replace(/^import (type )?\{([^}]*)\} from "effect"$/gm, (line, typeOnly, names) =>
        (typeOnly !== undefined
          ? ""
          : names
              .split(",")
              .map((name) => name.trim())
              .filter((name) => name !== "" && !name.startsWith("type "))
              .map((name) => {
                const [imported, local = imported] = name.split(/\s+as\s+/)
                return FUNCTION_EXPORTS.has(imported)
                  ? `import { ${imported} as ${local} } from "effect/Function"`
                  : `import * as ${local} from "effect/${imported}"`
              })
              .join("; ")) + "\n".repeat(line.split("\n").length - 1)
      )
      if (rewritten.includes('from "effect"')) throw new Error(`${args.path}: an import from "effect" the CLI's bundle cannot rewrite`)
      return { contents: rewritten, loader: "ts" }
    })
  }
}

const common = { bundle: true, platform: "node", target: "node20", sourcemap: true, logLevel: "warning" }

const { metafile } = await build({
  ...common,
  entryPoints: { run: "src/Cli/Main.ts" },
  outdir,
  outExtension: { ".js": ".cjs" },
  format: "cjs",
  // Without keepNames: its `__name` call for every function, at load and for each closure made while
  // a command runs, cost more CPU than any name is worth here (errors are told by their tags).
  minify: true,
  // Native or optional modules, and the ones its threads load by path.
  external: ["pg-native", "@node-rs/argon2", "@electric-sql/*"],
  // One function expression, which CompiledBundle.ts compiles and calls as Node calls a CommonJS module.
  banner: {
    js: '(function (exports, require, module, __filename, __dirname) { "use strict"; var __bundleUrl = require("node:url").pathToFileURL(__filename).href;'
  },
  footer: { js: "})" },
  define: { "import.meta.url": "__bundleUrl" },
  metafile: true,
  plugins: [nodeOnlyPg, effectModules]
})
const effectIndex = Object.keys(metafile.inputs).find((input) => /[\\/]effect[\\/]dist[\\/]esm[\\/]index\.js$/.test(input))
if (effectIndex !== undefined) throw new Error(`the CLI's bundle holds ${effectIndex}, which evaluates all of effect`)

await build({ ...common, entryPoints: { main: "src/cli.ts" }, outdir, format: "esm", plugins: [bundledMain] })

// The thread that reads destination pages' preview tags loads its script beside the bundle
// (src/SmartLinks/PageTagThread.ts): `link set-settings` fetches them.
await build({ ...common, entryPoints: { PageTagWorker: "src/SmartLinks/PageTagWorker.ts" }, outdir, format: "esm" })

// The code cache, made by the CLI's own loader (bundled for this step) in a process of its own: the
// bundle's modules, the commands' too, run their top level, then `user list` runs against a database
// that refuses the connection, so that the code of a command's start (configuration, layers, Effect's
// runtime, connecting, failing) is compiled too; the cache is written as that process exits.
const [loader] = (await build({ ...common, entryPoints: ["src/Cli/CompiledBundle.ts"], format: "esm", sourcemap: false, write: false })).outputFiles
const bundle = resolve(outdir, "run.cjs")
rmSync(`${bundle}.cache`, { force: true })
const warm = `import { storeCodeCache } from "data:text/javascript;base64,${Buffer.from(loader.contents).toString("base64")}"
await storeCodeCache(${JSON.stringify(bundle)}, async (main) => { await main.loadCommands(); main.runCli(["user", "list", "--json"]) })`
const dataDir = mkdtempSync(join(tmpdir(), "links-cli-cache-"))
try {
  const env = { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, DATABASE_URL: "postgres://cli@127.0.0.1:1/none", LOG_LEVEL: "none" }
  const warmed = spawnSync(process.execPath, ["--input-type=module", "-e", warm], { env, encoding: "utf8" })
  if (!existsSync(`${bundle}.cache`)) throw new Error(`the CLI's code cache was not written: ${warmed.stderr || warmed.error}`)
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}

if (folder === undefined) writeFileSync("dist/cli.js", 'import "./Cli/main.js"\n')
