import { fileURLToPath } from "node:url"
import { loadBundle } from "./CompiledBundle.ts"

/**
 * `Main.ts` as `npm run build` bundles it: src/cli.ts imports this module instead of `Main.ts` in
 * the bundle (scripts/bundle-cli.mjs), which then loads `run.cjs` beside it only for the commands
 * that need it.
 */
interface MainModule {
  readonly runCli: (argv: ReadonlyArray<string>) => void
}

const isMainModule = (value: object): value is MainModule => "runCli" in value && typeof value.runCli === "function"

export const runCli = (argv: ReadonlyArray<string>) => {
  const main = loadBundle(fileURLToPath(new URL("./run.cjs", import.meta.url)))
  if (!isMainModule(main)) throw new Error("run.cjs is not the CLI's bundle: run npm run build")
  main.runCli(argv)
}
