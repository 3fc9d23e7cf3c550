import { spawn } from "node:child_process"
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { setTimeout as sleep } from "node:timers/promises"
import type { Cleanup } from "./Cleanup.ts"

const repoRoot = fileURLToPath(new URL("../..", import.meta.url))

export interface ServiceProcess {
  readonly pid: number
  readonly baseUrl: string
  /** The child's resident set size in KiB, from /proc/<pid>/status. */
  readonly rssKiB: () => Promise<number | undefined>
  /** SIGTERM, then waits for the exit (SIGKILL after 15 s); how it exited. */
  readonly stop: () => Promise<string>
  /** Sends `signal` (to the process group when started with `processGroup`). */
  readonly signal: (signal: NodeJS.Signals) => void
  /** How it exited, once it has. */
  readonly exited: Promise<string>
}

/**
 * The real service (`node --import tsx src/main.ts`) as a child process listening on `port`, ready
 * once GET /readyz answers 200. Its output goes to our stderr, prefixed, so stdout keeps only the
 * report. `cleanup` stops it with SIGTERM and waits for it to exit. With `processGroup` it runs in a
 * process group of its own, and every signal goes to the whole group, as systemd sends it.
 */
export const startService = async (
  cleanup: Cleanup,
  options: {
    readonly port: number
    readonly env: Record<string, string>
    readonly readyTimeoutMs: number
    readonly processGroup?: boolean
    /** The checkout to run (default this one): an A/B bench runs another beside it. */
    readonly root?: string
    /** Node flags of this process only, after BENCH_NODE_ARGS. */
    readonly nodeArgs?: ReadonlyArray<string>
    /** Takes every line of the child's stdout, instead of our stderr. */
    readonly onLine?: (line: string) => void
  }
): Promise<ServiceProcess> => {
  const profile = process.env.BENCH_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : []
  // Node flags NODE_OPTIONS refuses (--trace-gc and the like), space separated.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "")
  const child = spawn(process.execPath, [...profile, ...nodeArgs, ...(options.nodeArgs ?? []), "--import", "tsx", "src/main.ts"], {
    cwd: options.root ?? repoRoot,
    // No drain on stop unless the scenario asks for one: the benches measure what follows it.
    env: { SHUTDOWN_DRAIN_SECONDS: "0", ...process.env, ...options.env, PORT: String(options.port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.processGroup === true
  })
  const exited = new Promise<string>((resolve) =>
    child.once("exit", (code, signal) => resolve(signal === null ? `code ${code}` : `signal ${signal}`))
  )
  let running = true
  void exited.then(() => (running = false))
  const onLine = options.onLine
  if (onLine !== undefined) {
    let partial = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n")
      partial = lines.pop() ?? ""
      for (const line of lines) onLine(line)
    })
  }
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding("utf8")
    if (onLine === undefined || stream === child.stderr) {
      stream.on("data", (chunk: string) => process.stderr.write(chunk.replace(/^(?=.)/gm, "[service] ")))
    }
  }
  if (child.pid === undefined) throw new Error("the service process did not start")
  const pid = child.pid
  const signal = (name: NodeJS.Signals) => {
    if (!running) return
    try {
      if (options.processGroup === true) process.kill(-pid, name)
      else child.kill(name)
    } catch {
      // Gone meanwhile (ESRCH).
    }
  }
  const stop = async () => {
    if (!running) return exited
    signal("SIGTERM")
    const stopped = await Promise.race([exited.then(() => true), sleep(15_000, false)])
    if (!stopped) {
      process.stderr.write("the service did not exit 15 s after SIGTERM; sending SIGKILL\n")
      signal("SIGKILL")
    }
    return exited
  }
  cleanup.defer("stop the service", async () => {
    await stop()
  })

  const baseUrl = `http://127.0.0.1:${options.port}`
  const deadline = Date.now() + options.readyTimeoutMs
  while (!(await isReady(baseUrl))) {
    if (!running) throw new Error(`the service exited before it was ready (${await exited})`)
    if (Date.now() > deadline) throw new Error(`the service was not ready within ${options.readyTimeoutMs} ms`)
    await sleep(100)
  }
  return { pid, baseUrl, rssKiB: () => rssKiB(pid), stop, signal, exited }
}

const isReady = async (baseUrl: string) => {
  try {
    const response = await fetch(`${baseUrl}/readyz`)
    await response.arrayBuffer()
    return response.status === 200
  } catch {
    return false
  }
}

const rssKiB = async (pid: number) => {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8")
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)
    return match?.[1] === undefined ? undefined : Number(match[1])
  } catch {
    return undefined
  }
}
