/**
 * Wall time of admin CLI commands as an operator runs them (`node dist/cli.js ...`, what `npm run cli`
 * runs, without npm's own start). `npm run bench:cli`; PostgreSQL only (BENCH_DATABASE_URL or
 * DATABASE_URL names the server: a fresh database is made there and dropped at the end), e.g.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:cli
 *   BENCH_DATABASE_URL=... npm run bench:cli -- --baseline /tmp/other-checkout/dist/cli.js
 *
 * Setup: the CLI migrates the new database and creates one account. Then each command runs once to
 * warm up (file cache, the code cache rewritten if this Node refuses it), and BENCH_RUNS times
 * (default 10), in rounds: each round runs `node -e 0` (Node's own start, the floor) and every command
 * of every CLI given once, so that a change of the machine's load touches them alike. `--baseline
 * FILE` adds another build's dist/cli.js, measured in the same rounds. Every run must exit 0 and
 * print one JSON object (but `--version`). Printed: wall time's median, p90 (nearest rank) and
 * fastest, and the median CPU (user + system, Linux only: each run goes through `sh`, whose /proc stat
 * counts it, 10 ms ticks), which a loaded machine inflates less than wall time. The shell's own start
 * is in the wall times, alike for every row.
 */
import { spawn } from "node:child_process"
import { availableParallelism, loadavg } from "node:os"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { benchDatabase } from "./support/BenchDatabase.ts"
import { runProgram } from "./support/Cleanup.ts"
import { numberFromEnv } from "./support/Env.ts"
import { formatTable } from "./support/Table.ts"
import { percentile } from "./support/Percentile.ts"

const REPO = fileURLToPath(new URL("../", import.meta.url))

const COMMANDS: ReadonlyArray<ReadonlyArray<string>> = [
  ["--version"],
  ["account", "list", "--json"],
  ["user", "list", "--json"],
  ["domain", "list", "--json"],
  ["account", "show", "--account", "1", "--json"]
]

interface Run {
  readonly ms: number
  /** User and system CPU of the process, from its parent shell's waited-for children (Linux, 10 ms ticks). */
  readonly cpuMs: number
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `node ARGS` under a shell that, once it ends, writes its own /proc stat (children's CPU included) to fd 3. */
const UNDER_SHELL = 'node "$@"; code=$?; cat /proc/$$/stat >&3; exit $code'
const TICK_MS = 10

/** cutime and cstime, fields 16 and 17 of /proc/PID/stat (counted after the name in parentheses). */
const childCpuMs = (stat: string) => {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).trim().split(" ")
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS
}

const timed = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<Run>((done, failed) => {
    const started = process.hrtime.bigint()
    const child = spawn("/bin/sh", ["-c", UNDER_SHELL, "sh", ...args], { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    let stat = ""
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdio[3]?.on("data", (chunk: Buffer) => (stat += chunk.toString()))
    child.on("error", failed)
    child.on("close", (code) =>
      done({ ms: Number(process.hrtime.bigint() - started) / 1e6, cpuMs: childCpuMs(stat), code, stdout, stderr })
    )
  })


const checked = (what: string, run: Run, json: boolean) => {
  if (run.code !== 0) throw new Error(`${what} exited ${run.code}: ${run.stderr.trim()}`)
  if (json) JSON.parse(run.stdout)
  return run
}

runProgram("bench:cli", async (cleanup) => {
  const { values } = parseArgs({ options: { baseline: { type: "string" } } })
  const runs = Math.max(1, numberFromEnv("BENCH_RUNS", 10))
  const database = await benchDatabase(cleanup)
  if (database.env.DATABASE_URL === undefined) throw new Error("set BENCH_DATABASE_URL (or DATABASE_URL) to a PostgreSQL server")
  const env = { ...process.env, ...database.env, LOG_LEVEL: "warning" }
  const clis = [{ name: "this build", entry: resolve(REPO, "dist/cli.js") }]
  if (values.baseline !== undefined) clis.unshift({ name: "baseline", entry: resolve(values.baseline) })

  const newest = clis[clis.length - 1]!.entry
  checked("migrate", await timed([newest, "migrate", "--json"], env), true)
  checked("account create", await timed([newest, "account", "create", "--name", "Bench", "--plan", "team", "--json"], env), true)

  const cases = [
    { cli: "-", command: "node -e 0", args: ["-e", "0"], json: false },
    ...clis.flatMap((cli) =>
      COMMANDS.map((command) => ({ cli: cli.name, command: command.join(" "), args: [cli.entry, ...command], json: command[0] !== "--version" }))
    )
  ]
  const times = cases.map(() => new Array<number>())
  const cpu = cases.map(() => new Array<number>())
  const loads: Array<number> = []
  for (let round = 0; round <= runs; round++) {
    loads.push(loadavg()[0] ?? 0)
    for (const [index, item] of cases.entries()) {
      const run = checked(`${item.cli} ${item.command}`, await timed(item.args, env), item.json)
      if (round > 0) {
        times[index]!.push(run.ms)
        cpu[index]!.push(run.cpuMs)
      }
    }
  }

  const rows = cases.map((item, index) => {
    const sorted = times[index]!.slice().sort((a, b) => a - b)
    const cpuSorted = cpu[index]!.slice().sort((a, b) => a - b)
    return [
      item.command,
      item.cli,
      percentile(sorted, 0.5).toFixed(0),
      percentile(sorted, 0.9).toFixed(0),
      (sorted[0] ?? Number.NaN).toFixed(0),
      percentile(cpuSorted, 0.5).toFixed(0)
    ]
  })
  process.stdout.write(
    `${database.kind}, Node ${process.version}, ${availableParallelism()} cores, load average ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)}; ` +
      `${runs} runs each after one warm-up, in rounds\n\n${formatTable(["command", "CLI", "median ms", "p90 ms", "fastest ms", "CPU median ms"], rows)}\n`
  )
  return 0
})
