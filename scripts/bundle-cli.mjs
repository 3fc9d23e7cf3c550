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
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"

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

const common = { bundle: true, platform: "node", target: "node20", sourcemap: true, logLevel: "warning" }

await build({
  ...common,
  entryPoints: { run: "src/Cli/Main.ts" },
  outdir,
  outExtension: { ".js": ".cjs" },
  format: "cjs",
  minify: true,
  keepNames: true,
  // Native or optional modules, and the ones its threads load by path.
  external: ["pg-native", "@node-rs/argon2", "@electric-sql/*"],
  // One function expression, which CompiledBundle.ts compiles and calls as Node calls a CommonJS module.
  banner: {
    js: '(function (exports, require, module, __filename, __dirname) { "use strict"; var __bundleUrl = require("node:url").pathToFileURL(__filename).href;'
  },
  footer: { js: "})" },
  define: { "import.meta.url": "__bundleUrl" },
  plugins: [nodeOnlyPg]
})

await build({ ...common, entryPoints: { main: "src/cli.ts" }, outdir, format: "esm", plugins: [bundledMain] })

// The code cache, made by the CLI's own loader (bundled for this step) after the bundle's modules,
// the commands' too, have run their top level.
const [loader] = (await build({ ...common, entryPoints: ["src/Cli/CompiledBundle.ts"], format: "esm", sourcemap: false, write: false })).outputFiles
const { storeCodeCache } = await import(`data:text/javascript;base64,${Buffer.from(loader.contents).toString("base64")}`)
await storeCodeCache(resolve(outdir, "run.cjs"), (main) => main.loadCommands())

if (folder === undefined) writeFileSync("dist/cli.js", 'import "./Cli/main.js"\n')
