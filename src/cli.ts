import { isHelpOrVersion, scanCommandLine } from "./Cli/Options.ts"
import { commandUsage } from "./Cli/Usage.ts"
import { version } from "./Cli/Version.ts"

/**
 * The admin CLI's entry. `--help` and `--version` are answered here, from modules that load nothing
 * else; any other command loads the rest of the CLI (Effect and the services) first.
 */
const argv = process.argv.slice(2)
const { json, scanned } = scanCommandLine(argv)
if (scanned._tag === "Scanned" && isHelpOrVersion(scanned)) {
  const answer = scanned.values.has("version") ? { version: version() } : { usage: commandUsage(scanned.spoken) }
  process.stdout.write(`${json ? JSON.stringify(answer) : Object.values(answer)[0]}\n`)
} else {
  const { runCli } = await import("./Cli/Main.ts")
  runCli(argv)
}
