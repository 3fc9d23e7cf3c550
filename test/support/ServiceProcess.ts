import { Deferred, Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { freePort } from "./OpsSockets.ts"

export const REPO = fileURLToPath(new URL("../..", import.meta.url))

export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** When the process ended, from `Date.now()`. */
  readonly at: number
}

export interface ServiceProcess {
  readonly port: number
  readonly url: string
  readonly stdout: () => string
  readonly stderr: () => string
  readonly pid: number
  readonly kill: (signal: NodeJS.Signals) => Effect.Effect<void>
  /** The signal to the process's whole group, as systemd or a terminal's Ctrl-C sends it. */
  readonly killGroup: (signal: NodeJS.Signals) => Effect.Effect<void>
  readonly exited: Effect.Effect<Exited>
  readonly hasExited: Effect.Effect<boolean>
}

const created = new Set<string>()

/** A new temporary directory (an embedded database takes about 40 MB), removed by `removeTempDirs`. */
export const tempDir = (prefix = "links-proc-") => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  created.add(dir)
  return dir
}

export const removeTempDirs = () => {
  for (const dir of created) rmSync(dir, { recursive: true, force: true })
  created.clear()
}

/**
 * `node --import tsx src/main.ts` in the repository (or `npm start`, which runs the build in `dist/`), in a process
 * group of its own, with only the given variables (plus PATH and HOME), `PORT` set to a free port
 * and no drain on stop (SHUTDOWN_DRAIN_SECONDS=0) unless given; its group is killed with SIGKILL
 * when the scope closes if anything of it still runs.
 */
export const spawnService = (env: Readonly<Record<string, string>>, command: "node" | "npm start" = "node") =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const port = env.PORT === undefined ? yield* Effect.promise(freePort) : Number(env.PORT)
      const exited = yield* Deferred.make<Exited>()
      const [file, args] = command === "node" ? [process.execPath, ["--import", "tsx", "src/main.ts"]] : ["npm", ["start"]]
      const child = spawn(file, args, {
        cwd: REPO,
        detached: true,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? tmpdir(),
          HOST: "127.0.0.1",
          PORT: String(port),
          SHUTDOWN_DRAIN_SECONDS: "0",
          ...env
        },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      child.on("exit", (code, signal) => Deferred.unsafeDone(exited, Effect.succeed({ code, signal, at: Date.now() })))
      const pid = child.pid
      if (pid === undefined) return yield* Effect.dieMessage(`${command} did not start`)
      const killGroup = (signal: NodeJS.Signals) =>
        Effect.sync(() => {
          try {
            process.kill(-pid, signal)
          } catch {
            // The group is gone already.
          }
        })
      const service: ServiceProcess = {
        port,
        pid,
        url: `http://127.0.0.1:${port}`,
        stdout: () => stdout,
        stderr: () => stderr,
        kill: (signal) => Effect.sync(() => void child.kill(signal)),
        killGroup,
        exited: Deferred.await(exited),
        hasExited: Deferred.isDone(exited)
      }
      return service
    }),
    (service) =>
      Effect.gen(function* () {
        yield* service.killGroup("SIGKILL")
        yield* service.exited
      })
  )

const describeProcess = (service: ServiceProcess) => `\n--- stdout\n${service.stdout()}\n--- stderr\n${service.stderr()}`

/** Waits until `/readyz` answers 200; dies (with the process output) if it exits or takes too long. */
export const waitReady = (service: ServiceProcess, timeoutMs = 60_000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      if (yield* service.hasExited) return yield* Effect.dieMessage(`the service exited before it was ready${describeProcess(service)}`)
      const status = yield* Effect.promise(() =>
        fetch(`${service.url}/readyz`).then(
          (response) => response.status,
          () => 0
        )
      )
      if (status === 200) return
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.dieMessage(`the service was not ready after ${timeoutMs} ms${describeProcess(service)}`)
  })

/** The exit of the process, or a defect (with its output) if it has not exited within `timeoutMs`. */
export const exitWithin = (service: ServiceProcess, timeoutMs: number) =>
  service.exited.pipe(
    Effect.timeoutFail({
      duration: timeoutMs,
      onTimeout: () => new Error(`the service did not exit within ${timeoutMs} ms${describeProcess(service)}`)
    }),
    Effect.orDie
  )

/** Runs the service until it exits by itself (a configuration error, say). */
export const runToExit = (env: Readonly<Record<string, string>>, timeoutMs = 30_000) =>
  Effect.scoped(
    Effect.gen(function* () {
      const service = yield* spawnService(env)
      const exited = yield* exitWithin(service, timeoutMs)
      return { ...exited, stdout: service.stdout(), stderr: service.stderr() }
    })
  )
