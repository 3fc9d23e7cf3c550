/**
 * The README's "Walkthrough with curl" runs as written (issue #44): its ```sh blocks, in order, as one
 * bash script in a directory of its own (the first block starts the service with `npm start` on a new
 * database), each command's answer compared with the `# → ` lines the README shows under it.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "./support/OpsSockets.ts"
import { REPO } from "./support/ServiceProcess.ts"
import { compareAnswer, splitOutputs, walkthroughScript } from "./support/Walkthrough.ts"

const HEADING = "## Walkthrough with curl"
// Service start (20 s or more on a busy 2-core machine), about 60 requests and three CLI runs.
const SCRIPT_DEADLINE_MS = 160_000

interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly timedOut: boolean
}

/** Bash on the script in `cwd`, in a process group of its own, killed whole when it ends or times out. */
const runScript = (file: string, cwd: string, env: NodeJS.ProcessEnv) =>
  new Promise<Finished>((resolve, reject) => {
    const child = spawn("bash", [file], { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    let timedOut = false
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    // The walkthrough's service runs in bash's group: it goes with it, whatever the script did.
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      } catch {
        // Nothing of the group is left.
      }
    }
    const timer = setTimeout(() => {
      timedOut = true
      killGroup()
    }, SCRIPT_DEADLINE_MS)
    child.on("error", reject)
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      killGroup()
      resolve({ code, signal, stdout, stderr, timedOut })
    })
  })

const tail = (text: string, lines = 30) => text.split("\n").slice(-lines).join("\n")

describe("the README walkthrough", () => {
  it("reads the answers the README shows", () => {
    const readme = ["# Title", HEADING, "", "```sh", "X=1", "curl -s x", '# → {"a":1,', '#     "b":[2,...]}', "# prose", "echo hi", "# → hi", "```", "## Next"].join("\n")
    const { script, steps } = walkthroughScript(readme, HEADING)
    expect(steps).toEqual([
      { line: 7, expected: '{"a":1,\n"b":[2,...]}', commands: "X=1 curl -s x" },
      { line: 11, expected: "hi", commands: "echo hi" }
    ])
    // Line for line the README, so that bash's line numbers are the README's.
    expect(script.split("\n").slice(4, 11)).toEqual(["X=1", "curl -s x", "printf '\\n\u001e0\\n'", "", "# prose", "echo hi", "printf '\\n\u001e1\\n'"])
  })

  it("compares shapes and deterministic values, and reports what differs", () => {
    const shown = '{"objects":[{"id":1,"alias":"spring","created":1796664000,"date":"2026-11-30","url":"http://sho.rt/...",...},...],"meta":{...}}'
    const answer = { objects: [{ id: 7, alias: "spring", created: 1800000000, date: "2027-01-02", url: "http://sho.rt/x1", more: true }, {}], meta: { total: 2 } }
    expect(compareAnswer(shown, JSON.stringify(answer), "localhost:1")).toEqual([])
    expect(compareAnswer(shown, JSON.stringify({ ...answer, objects: [{ ...answer.objects[0], alias: "spring27" }] }), "localhost:1")).toEqual([
      'answer.objects[0].alias: the README shows "spring", the service answered "spring27"'
    ])
    expect(compareAnswer('{"count":2}', '{"count":2,"unique":1}', "localhost:1")).toEqual([
      "answer: the answer has unique, which the README neither shows nor leaves out with ..."
    ])
    expect(compareAnswer('{"errors":[...]}', "curl: (7) Failed to connect", "localhost:1")).toHaveLength(1)
    expect(compareAnswer("303 http://localhost:8080/secret", "303 http://localhost:4711/secret\n", "localhost:4711")).toEqual([])
    expect(compareAnswer("200 image/...", "404 application/json", "localhost:1")).toHaveLength(1)
  })

  it(
    "runs top to bottom against a new service, every answer as the README shows it",
    async () => {
      const readme = readFileSync(join(REPO, "README.md"), "utf8")
      const { script, steps } = walkthroughScript(readme, HEADING)
      expect(steps.length).toBeGreaterThan(40)
      // A directory of its own: the walkthrough writes files (service.log, spring.svg, the CSVs) and its
      // temporary DATA_DIR there; npm finds the repository's package, build and modules through links.
      const work = mkdtempSync(join(tmpdir(), "links-walkthrough-"))
      try {
        for (const entry of ["package.json", "dist", "node_modules"]) symlinkSync(join(REPO, entry), join(work, entry))
        const file = join(work, "walkthrough.sh")
        writeFileSync(file, script)
        const port = await freePort()
        const finished = await runScript(file, work, {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? tmpdir(),
          LANG: "C.UTF-8",
          TMPDIR: work,
          PORT: String(port),
          HOST: "127.0.0.1",
          SHUTDOWN_DRAIN_SECONDS: "0",
          // Only 127.0.0.1 is reached: no registry lookup for a newer npm.
          npm_config_update_notifier: "false"
        })
        const log = join(work, "service.log")
        const context = [
          `exit ${finished.code ?? finished.signal}${finished.timedOut ? ` (killed after ${SCRIPT_DEADLINE_MS} ms)` : ""}`,
          `--- stderr\n${tail(finished.stderr)}`,
          `--- service.log\n${existsSync(log) ? tail(readFileSync(log, "utf8"), 15) : "(none)"}`
        ].join("\n")
        const outputs = splitOutputs(finished.stdout, steps.length)
        const problems =
          outputs === undefined
            ? [`the answers' markers are missing or out of order: the script stopped early\n--- stdout\n${tail(finished.stdout)}`]
            : [
                ...steps.flatMap((step, index) =>
                  compareAnswer(step.expected, outputs[index]!, `localhost:${port}`).map(
                    (problem) => `README.md line ${step.line} (${step.commands.slice(0, 140)}): ${problem}`
                  )
                ),
                ...(outputs[steps.length]!.trim() === "" ? [] : [`printed after the last answer shown: ${outputs[steps.length]}`])
              ]
        expect(problems, context).toEqual([])
        expect(finished.code, context).toBe(0)
      } finally {
        rmSync(work, { recursive: true, force: true })
      }
    },
    180_000
  )
})
