// The admin CLI as one bundle (dist/Cli/main.js, its database half in a chunk loaded only when a
// command needs it): loading the ~1,300 modules tsc emits took seconds per command. dist/cli.js,
// tsc's entry, is replaced by a line that loads the bundle. Bundles sit one folder below dist/, as
// the modules they hold do, so that their paths to sql/ and package.json stay right. Given a folder
// (directly under the repository, as the tests do), the bundle goes to its Cli/ and dist/ is left alone.
import { build } from "esbuild"
import { writeFileSync } from "node:fs"
import { join } from "node:path"

const folder = process.argv[2]

await build({
  entryPoints: { main: "src/cli.ts" },
  outdir: join(folder ?? "dist", "Cli"),
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  chunkNames: "chunk-[hash]",
  // Native or optional modules, and the ones its threads load by path.
  external: ["pg-native", "@node-rs/argon2", "@electric-sql/*"],
  // Bundled CommonJS modules (pg) call require.
  banner: { js: 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);' },
  logLevel: "warning"
})
if (folder === undefined) writeFileSync("dist/cli.js", 'import "./Cli/main.js"\n')
