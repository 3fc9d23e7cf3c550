import { spawn } from "node:child_process"
import { readFile } from "node:fs/promises"
import { transform } from "esbuild"
import type { LoopDelay } from "../../src/Platform/LoopDelay.ts"
import type { Cleanup } from "./Cleanup.ts"

const SERVER = `
const http = require("node:http")
const headers = JSON.parse(process.argv[2])
http.createServer((req, res) => {
  res.writeHead(301, headers)
  res.end()
}).listen(Number(process.argv[1]), "127.0.0.1", () => process.stdout.write("ready\\n"))
`

/**
 * The service's own src/Platform/LoopDelay.ts (same resolution, same "late by" arithmetic), as
 * CommonJS for a child that runs without tsx: the reference must not load the service's loader.
 */
const loopDelaySource = async () => {
  const source = await readFile(new URL("../../src/Platform/LoopDelay.ts", import.meta.url), "utf8")
  const { code } = await transform(source, { loader: "ts", format: "cjs", platform: "node", target: "node20" })
  return `const { watchLoopDelay } = (() => { const module = { exports: {} }; const exports = module.exports;\n${code}\nreturn module.exports })()`
}

/** Its timer, away from the request handler: one window a second to the parent over IPC. */
const LOOP_REPORTER = `
const loop = watchLoopDelay()
setInterval(() => process.send(loop.take()), 1000)
`

const isLoopDelay = (message: unknown): message is LoopDelay =>
  typeof message === "object" &&
  message !== null &&
  "p50" in message &&
  typeof message.p50 === "number" &&
  "p99" in message &&
  typeof message.p99 === "number" &&
  "max" in message &&
  typeof message.max === "number"

/**
 * A bare node:http server answering every request with the same 301 (`headers`), in a child process
 * of its own so that, like the service, it has an event loop (and a core) to itself. `nodeArgs` are
 * its Node flags; `onLine` takes every other line of its stdout (--trace-gc output, say). With
 * `onLoopDelay`, it measures its event-loop delay as the service measures its threads' and hands
 * each 1-second window to that function.
 */
export const startRedirectReference = async (
  cleanup: Cleanup,
  port: number,
  headers: Readonly<Record<string, string>>,
  options: {
    readonly nodeArgs?: ReadonlyArray<string>
    readonly onLine?: (line: string) => void
    readonly onLoopDelay?: (window: LoopDelay) => void
  } = {}
) => {
  const onLoopDelay = options.onLoopDelay
  const source = onLoopDelay === undefined ? SERVER : `${SERVER}\n${await loopDelaySource()}\n${LOOP_REPORTER}`
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), "-e", source, String(port), JSON.stringify(headers)], {
    stdio: onLoopDelay === undefined ? ["ignore", "pipe", "inherit"] : ["ignore", "pipe", "inherit", "ipc"]
  })
  if (onLoopDelay !== undefined) {
    child.on("message", (message: unknown) => {
      if (isLoopDelay(message)) onLoopDelay(message)
    })
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  cleanup.defer("stop the reference server", async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    await exited
  })
  const stdout = child.stdout
  if (stdout === null) throw new Error("the reference server has no stdout")
  await new Promise<void>((resolve, reject) => {
    let partial = ""
    stdout.setEncoding("utf8")
    stdout.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n")
      partial = lines.pop() ?? ""
      for (const line of lines) {
        if (line === "ready") resolve()
        else options.onLine?.(line)
      }
    })
    child.once("exit", (code, signal) => reject(new Error(`the reference server exited (${signal ?? code})`)))
  })
  if (child.pid === undefined) throw new Error("the reference server did not start")
  return { baseUrl: `http://127.0.0.1:${port}`, pid: child.pid }
}
