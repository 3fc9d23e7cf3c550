import { Effect } from "effect"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"

/**
 * A hashing thread: argon2 of `@node-rs/argon2` run synchronously at the lowest CPU priority. On
 * Linux the nice value belongs to the thread, so whenever the event loop, PostgreSQL or anything
 * else on the machine wants a core, the kernel gives it to them before a hash.
 */
const threadSource = `
const { parentPort, workerData } = require("node:worker_threads")
const argon2 = require(workerData.argon2)
try { require("node:os").setPriority(0, 19) } catch {}
parentPort.postMessage({ id: -1 })
parentPort.on("message", ({ id, password, stored }) => {
  try {
    const value = stored === undefined ? argon2.hashSync(password) : argon2.verifySync(stored, password)
    parentPort.postMessage({ id, value })
  } catch (error) {
    parentPort.postMessage({ id, failure: String(error) })
  }
})
`

const argon2Path = createRequire(import.meta.url).resolve("@node-rs/argon2")

interface Reply {
  readonly id: number
  readonly value?: string | boolean
  readonly failure?: string
}

export class HashThread {
  private readonly pending = new Map<number, (reply: Reply) => void>()
  private nextId = 0
  private worker: Worker
  private closed = false
  private started: () => void = () => undefined
  /** Settled once the first thread runs at its priority. */
  readonly ready = new Promise<void>((resolve) => {
    this.started = resolve
  })

  constructor() {
    this.worker = this.spawn()
  }

  private spawn(): Worker {
    const worker = new Worker(threadSource, { eval: true, workerData: { argon2: argon2Path } })
    worker.unref()
    worker.on("message", (reply: Reply) => {
      if (reply.id < 0) return this.started()
      const done = this.pending.get(reply.id)
      this.pending.delete(reply.id)
      if (this.pending.size === 0) worker.unref()
      done?.(reply)
    })
    worker.on("error", () => undefined)
    worker.on("exit", () => {
      for (const [id, done] of this.pending) done({ id, failure: "the hashing thread stopped" })
      this.pending.clear()
      if (!this.closed) this.worker = this.spawn()
    })
    return worker
  }

  private run(job: { readonly password: string; readonly stored?: string }): Promise<Reply> {
    return new Promise((resolve) => {
      const id = this.nextId++
      this.pending.set(id, resolve)
      // Referenced while it works, so a process with nothing else to do waits for the answer.
      this.worker.ref()
      this.worker.postMessage({ id, ...job })
    })
  }

  hash(password: string): Promise<string> {
    return this.run({ password }).then((reply) =>
      typeof reply.value === "string" ? reply.value : Promise.reject(new Error(reply.failure ?? "no hash"))
    )
  }

  /** Whether `password` matches `stored`; false for a malformed `stored`. */
  verify(stored: string, password: string): Promise<boolean> {
    return this.run({ password, stored }).then((reply) => reply.value === true)
  }

  close(): Promise<number> {
    this.closed = true
    return this.worker.terminate()
  }
}

/** `count` hashing threads, stopped with the scope. */
export const hashThreads = (count: number) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const threads = Array.from({ length: count }, () => new HashThread())
      await Promise.all(threads.map((thread) => thread.ready))
      return threads
    }),
    (threads) => Effect.promise(() => Promise.all(threads.map((thread) => thread.close())))
  )
