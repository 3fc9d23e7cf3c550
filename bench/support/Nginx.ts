import { spawn } from "node:child_process"
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import type { Cleanup } from "./Cleanup.ts"

/** The deployment guide's configuration (docs/DEPLOYING.md), which the bench runs as it is written. */
export const GUIDE_CONFIG = fileURLToPath(new URL("../../docs/nginx.conf", import.meta.url))

/** The example values of the guide's configuration that the bench replaces. */
const EXAMPLE_INSTANCES = ["10.0.0.11:8080", "10.0.0.12:8080"] as const
const EXAMPLE_LISTEN = "listen 80"

export interface Nginx {
  readonly baseUrl: string
  readonly port: number
  /** The lines of nginx's error log so far (level warn and above). */
  readonly errorLines: () => Promise<ReadonlyArray<string>>
  /** Copies the error log to `path` (kept after the run, for a failed check). */
  readonly keepErrorLog: (path: string) => Promise<void>
}

/** Every occurrence of `from` replaced; an error when there is none, so that the guide and the bench cannot drift apart silently. */
const replaceAll = (text: string, from: string, to: string) => {
  if (!text.includes(from)) throw new Error(`${GUIDE_CONFIG} no longer contains "${from}"`)
  return text.split(from).join(to)
}

/** The guide's configuration with the instances on 127.0.0.1 at `instancePorts` and nginx on 127.0.0.1:`port`. */
export const guideConfigFor = async (instancePorts: readonly [number, number], port: number) => {
  let text = await readFile(GUIDE_CONFIG, "utf8")
  EXAMPLE_INSTANCES.forEach((example, n) => (text = replaceAll(text, example, `127.0.0.1:${instancePorts[n]}`)))
  return replaceAll(text, EXAMPLE_LISTEN, `listen 127.0.0.1:${port}`)
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.setTimeout(1000, () => socket.destroy())
    socket.once("connect", () => {
      resolve(true)
      socket.destroy()
    })
    socket.once("error", () => undefined).once("close", () => resolve(false))
  })

/**
 * Debian's nginx as a child process (`daemon off`, its own prefix, pid file, temp paths and error log
 * in a temporary folder, no access log), with the guide's configuration inside its `http` block;
 * `cleanup` stops it (SIGQUIT, SIGKILL after 5 s) and removes the folder.
 */
export const startNginx = async (cleanup: Cleanup, instancePorts: readonly [number, number], port: number): Promise<Nginx> => {
  const dir = await mkdtemp(join(tmpdir(), "links-nginx-"))
  cleanup.defer("remove the nginx folder", () => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, "links.conf"), await guideConfigFor(instancePorts, port))
  const errorLog = join(dir, "error.log")
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((kind) => `    ${kind}_temp_path ${join(dir, kind)};`)
  await writeFile(
    join(dir, "nginx.conf"),
    [
      "daemon off;",
      // As Debian's /etc/nginx/nginx.conf: one worker per core.
      "worker_processes auto;",
      `pid ${join(dir, "nginx.pid")};`,
      `error_log ${errorLog} warn;`,
      "events {",
      "    worker_connections 1024;",
      "}",
      "http {",
      "    access_log off;",
      ...temp,
      `    include ${join(dir, "links.conf")};`,
      "}",
      ""
    ].join("\n")
  )
  const child = spawn("nginx", ["-p", `${dir}/`, "-c", join(dir, "nginx.conf")], { stdio: ["ignore", "pipe", "pipe"] })
  const exited = new Promise<string>((resolve) => {
    child.once("error", (error) => resolve(`not started: ${error.message} (install Debian's nginx-light)`))
    child.once("exit", (code, signal) => resolve(signal === null ? `code ${code}` : `signal ${signal}`))
  })
  let running = true
  void exited.then(() => (running = false))
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding("utf8")
    stream.on("data", (chunk: string) => process.stderr.write(chunk.replace(/^(?=.)/gm, "[nginx] ")))
  }
  cleanup.defer("stop nginx", async () => {
    if (!running) return
    child.kill("SIGQUIT")
    if (!(await Promise.race([exited.then(() => true), sleep(5000, false)]))) child.kill("SIGKILL")
    await exited
  })
  const deadline = Date.now() + 10_000
  while (!(await accepts(port))) {
    if (!running) throw new Error(`nginx exited before it listened (${await exited}): ${await readFile(errorLog, "utf8").catch(() => "")}`)
    if (Date.now() > deadline) throw new Error("nginx did not listen within 10 s")
    await sleep(50)
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    keepErrorLog: (path) => copyFile(errorLog, path),
    errorLines: async () => (await readFile(errorLog, "utf8").catch(() => "")).split("\n").filter((line) => line !== "")
  }
}
