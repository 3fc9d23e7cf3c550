import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { openApiDocuments } from "./OpenApiShapes.ts"

export interface LintOutcome {
  /** redocly's exit code: 0 when no rule of the recommended set reports an error. */
  readonly code: number
  /** What it printed, standard output then standard error. */
  readonly output: string
  /** Its standard output alone: the report (JSON with `format: "json"`). */
  readonly report: string
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/**
 * `redocly lint` with the recommended rule set over both documents, written to a temporary
 * directory: the same run as `npm run lint:openapi`.
 */
export const lintOpenApi = (format: "stylish" | "json" = "stylish"): Promise<LintOutcome> => {
  const directory = mkdtempSync(join(tmpdir(), "openapi-lint-"))
  const { v4, v3 } = openApiDocuments()
  const files = [join(directory, "openapi-v4.json"), join(directory, "openapi-v3.json")]
  writeFileSync(files[0]!, JSON.stringify(v4, null, 2))
  writeFileSync(files[1]!, JSON.stringify(v3, null, 2))
  const cli = join(ROOT, "node_modules", "@redocly", "cli", "bin", "cli.js")
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, "lint", ...files, "--extends", "recommended", "--format", format, "--max-problems", "1000"],
      { cwd: directory, env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        rmSync(directory, { recursive: true, force: true })
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, output: `${stdout}${stderr}`, report: stdout })
      }
    )
  })
}

// npm run lint:openapi
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  void lintOpenApi().then(({ code, output }) => {
    process.stdout.write(output)
    process.exit(code)
  })
}
