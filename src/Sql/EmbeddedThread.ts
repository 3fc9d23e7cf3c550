import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import type pg from "pg"

/**
 * PGlite and its socket server on a thread of their own. PGlite runs each statement synchronously
 * in WebAssembly: on the main thread, one long report stopped every redirect and API request for as
 * long as it ran. Here only the socket connects the two threads, so `PgClient` is unchanged.
 */
const threadSource = `
const { parentPort, workerData } = require("node:worker_threads")
// On Linux the nice value belongs to the thread: under load the database gives way to the event
// loop that answers redirects (a cached redirect has nothing to wait for in it).
try { require("node:os").setPriority(0, 10) } catch {}
// PGlite sets 0666 on the files it writes and 0777 on its folders: mask them to this user alone.
// This thread's node:fs is its own, so nothing outside it is touched.
const fs = require("node:fs")
const mask = (mode) => (typeof mode === "number" ? mode & ~0o077 : mode)
for (const name of ["chmodSync", "fchmodSync"]) {
  const original = fs[name]
  fs[name] = (target, mode) => original(target, mask(mode))
}
const openSync = fs.openSync
fs.openSync = (path, flags, mode) => openSync(path, flags, mode === undefined ? 0o600 : mask(mode))
const mkdirSync = fs.mkdirSync
fs.mkdirSync = (path, options) =>
  mkdirSync(path, typeof options === "object" && options !== null ? { ...options, mode: mask(options.mode ?? 0o700) } : mask(options ?? 0o700))
const { PGlite } = require(workerData.pglite)
const { PGLiteSocketServer } = require(workerData.socketServer)
let db
let server
// Every connection shares PGlite's one session, so a NOTIFY reaches only the connection whose statement
// ran it (the admin CLI's, the click writer's): each is also posted to the main thread, whose pool
// hears it as its own.
const announced = (view, post) => {
  let at = 0
  while (view.length - at >= 5) {
    const end = at + 1 + view.readInt32BE(at + 1)
    if (end > view.length) break
    if (view[at] === 0x41) {
      const channelEnd = view.indexOf(0, at + 9)
      const channel = view.toString("utf8", at + 9, channelEnd)
      post({ notification: { processId: view.readInt32BE(at + 5), channel, payload: view.toString("utf8", channelEnd + 1, end - 1) } })
    }
    at = end
  }
  return view.subarray(at)
}
const withAnnouncements = (db) => {
  const exec = db.execProtocolRawStream.bind(db)
  db.execProtocolRawStream = (message, options) => {
    let rest = Buffer.alloc(0)
    return exec(message, {
      ...options,
      onRawData: (data) => {
        const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
        rest = Buffer.from(announced(rest.length === 0 ? view : Buffer.concat([rest, view]), (m) => parentPort.postMessage(m)))
        return options.onRawData(data)
      }
    })
  }
}
const start = async () => {
  db = await PGlite.create(workerData.dataPath)
  withAnnouncements(db)
  server = new PGLiteSocketServer({ db, path: workerData.socketPath, maxConnections: 6 })
  await server.start()
}
start().then(
  () => parentPort.postMessage({ started: true }),
  (error) => parentPort.postMessage({ failed: String((error && error.stack) || error) })
)
parentPort.on("message", async (message) => {
  if (message !== "stop") return
  try { if (server !== undefined) await server.stop() } catch {}
  try { if (db !== undefined) await db.close() } catch {}
  parentPort.postMessage({ stopped: true })
  parentPort.close()
})
`

const require = createRequire(import.meta.url)

interface ThreadMessage {
  readonly notification?: pg.Notification
  readonly started?: boolean
  readonly failed?: string
  readonly stopped?: boolean
}

/** How long a stop may take before the thread is terminated: closing PGlite writes its files. */
const STOP_TIMEOUT_MS = 15_000

/**
 * The embedded database at `dataPath` ("memory://" for none) served on the Unix socket `socketPath`;
 * `onNotification` hears every notification any connection received.
 */
export const embeddedThread = (dataPath: string, socketPath: string, onNotification: (message: pg.Notification) => void) =>
  Effect.acquireRelease(
    Effect.async<Worker, SqlError>((resume) => {
      const worker = new Worker(threadSource, {
        eval: true,
        workerData: {
          pglite: require.resolve("@electric-sql/pglite"),
          socketServer: require.resolve("@electric-sql/pglite-socket"),
          dataPath,
          socketPath
        }
      })
      const fail = (reason: string) =>
        resume(Effect.fail(new SqlError({ cause: reason, message: `the embedded database did not start: ${reason}` })))
      worker.on("message", (message: ThreadMessage) => {
        if (message.notification !== undefined) onNotification(message.notification)
        else if (message.started === true) resume(Effect.succeed(worker))
        else if (message.stopped !== true) fail(message.failed ?? "no reason given")
      })
      worker.once("error", (error) => fail(String(error)))
      worker.once("exit", (code) => fail(`its thread exited with code ${code}`))
    }),
    (worker) =>
      Effect.async<void>((resume) => {
        worker.on("message", (message: ThreadMessage) => {
          if (message.stopped === true) resume(Effect.void)
        })
        worker.once("exit", () => resume(Effect.void))
        worker.postMessage("stop")
      }).pipe(
        Effect.timeoutOption(STOP_TIMEOUT_MS),
        Effect.andThen(Effect.promise(() => worker.terminate()))
      )
  )
