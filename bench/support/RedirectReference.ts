import { spawn } from "node:child_process"
import type { Cleanup } from "./Cleanup.ts"

const SOURCE = `
const http = require("node:http")
const headers = JSON.parse(process.argv[2])
http.createServer((req, res) => {
  res.writeHead(301, headers)
  res.end()
}).listen(Number(process.argv[1]), "127.0.0.1", () => process.stdout.write("ready\\n"))
`

/**
 * A bare node:http server answering every request with the same 301 (`headers`), in a child process
 * of its own so that, like the service, it has an event loop (and a core) to itself. `nodeArgs` are
 * its Node flags; `onLine` takes every other line of its stdout (--trace-gc output, say).
 */
export const startRedirectReference = async (
  cleanup: Cleanup,
  port: number,
  headers: Readonly<Record<string, string>>,
  options: { readonly nodeArgs?: ReadonlyArray<string>; readonly onLine?: (line: string) => void } = {}
) => {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), "-e", SOURCE, String(port), JSON.stringify(headers)], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  cleanup.defer("stop the reference server", async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    await exited
  })
  await new Promise<void>((resolve, reject) => {
    let partial = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
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
