import { Data, Effect, type Scope } from "effect"
import type { Worker } from "node:worker_threads"
import { startWorker } from "../Platform/WorkerScript.ts"
import type { PageTags } from "./PageTags.ts"
import type { FromPageTagWorker, PageTagJob } from "./PageTagWorker.ts"

/** A page's preview tags were not read: the thread overran its budget, did not start or stopped. */
export class PageTagsNotRead extends Data.TaggedError("PageTagsNotRead")<{ readonly reason: string }> {}

/**
 * How long a page's tags may take once posted to a running thread. The scan is linear (milliseconds
 * for PAGE_TAG_BYTES): this bounds only a parser bug's CPU, the thread is stopped and replaced.
 */
const PARSE_BUDGET_MS = 2000
/** How long a new thread may take to load its script (from the sources, tsx compiles it first). */
const START_BUDGET_MS = 30_000

export interface PageTagThread {
  /** The page's tags (undefined: it has none), read on the thread within `budgetMs` (PARSE_BUDGET_MS). */
  readonly parse: (html: string, pageUrl: string, budgetMs?: number) => Effect.Effect<PageTags | undefined, PageTagsNotRead>
}

interface Job {
  readonly budgetMs: number
  readonly resume: (outcome: Effect.Effect<PageTags | undefined, PageTagsNotRead>) => void
  timer: NodeJS.Timeout | undefined
}

interface Running {
  readonly worker: Worker
  readonly jobs: Map<number, Job>
  ready: boolean
  /** Why it was stopped, told to the jobs it had. */
  stopped: string | undefined
}

interface State {
  /** The thread pages go to; a new one is started when there is none. */
  running: Running | undefined
  closed: boolean
  nextId: number
}

const isPageTags = (value: unknown): value is PageTags =>
  typeof value === "object" &&
  value !== null &&
  "title" in value &&
  "description" in value &&
  "image" in value &&
  [value.title, value.description, value.image].every((field) => field === null || typeof field === "string")

const isMessage = (message: unknown): message is FromPageTagWorker =>
  message === "ready" ||
  (typeof message === "object" &&
    message !== null &&
    "id" in message &&
    typeof message.id === "number" &&
    "tags" in message &&
    (message.tags === null || isPageTags(message.tags)))

/**
 * Destination pages' tags read on a thread of their own (PageTagWorker.ts), started at the first page
 * and idle (unreferenced) between pages: the event loop that answers redirects never parses a page.
 * A page not answered within its budget stops the thread; the next page starts a new one.
 */
export const pageTagThread: Effect.Effect<PageTagThread, never, Scope.Scope> =
  Effect.map(
    Effect.acquireRelease(
      Effect.sync((): State => ({ running: undefined, closed: false, nextId: 0 })),
      (state) =>
        Effect.promise(() => {
          state.closed = true
          return state.running?.worker.terminate() ?? Promise.resolve(0)
        })
    ),
    (state): PageTagThread => {
      const stop = (thread: Running, reason: string) => {
        thread.stopped ??= reason
        if (state.running === thread) state.running = undefined
        void thread.worker.terminate()
      }

      const arm = (thread: Running, job: Job) => {
        // Unreferenced: the thread, referenced while it has pages, keeps the process alive for them.
        job.timer = setTimeout(() => stop(thread, `no answer within ${job.budgetMs} ms`), job.budgetMs).unref()
      }

      const spawn = (): Running => {
        const thread: Running = { worker: startWorker(import.meta.url, "PageTagWorker"), jobs: new Map(), ready: false, stopped: undefined }
        const starting = setTimeout(() => stop(thread, `not started within ${START_BUDGET_MS} ms`), START_BUDGET_MS).unref()
        thread.worker.on("message", (message: unknown) => {
          if (!isMessage(message)) return
          if (message === "ready") {
            clearTimeout(starting)
            thread.ready = true
            for (const job of thread.jobs.values()) arm(thread, job)
            return
          }
          const job = thread.jobs.get(message.id)
          if (job === undefined) return
          clearTimeout(job.timer)
          thread.jobs.delete(message.id)
          if (thread.jobs.size === 0) thread.worker.unref()
          job.resume(Effect.succeed(message.tags ?? undefined))
        })
        // An uncaught error ends the thread: "exit" follows and tells its jobs.
        thread.worker.on("error", (error) => {
          thread.stopped ??= `the thread failed: ${error.message}`
        })
        thread.worker.on("exit", (code) => {
          clearTimeout(starting)
          if (state.running === thread) state.running = undefined
          const reason = thread.stopped ?? `the thread exited with code ${code}`
          for (const job of thread.jobs.values()) {
            clearTimeout(job.timer)
            job.resume(Effect.fail(new PageTagsNotRead({ reason })))
          }
          thread.jobs.clear()
        })
        return thread
      }

      return {
        parse: (html, pageUrl, budgetMs = PARSE_BUDGET_MS) =>
          Effect.async<PageTags | undefined, PageTagsNotRead>((resume) => {
            if (state.closed) return resume(Effect.fail(new PageTagsNotRead({ reason: "the service is stopping" })))
            const thread = (state.running ??= spawn())
            const id = state.nextId++
            const job: Job = { budgetMs, resume, timer: undefined }
            thread.jobs.set(id, job)
            if (thread.ready) arm(thread, job)
            // Referenced while it works, so that a process with nothing else to do waits for the answer.
            thread.worker.ref()
            thread.worker.postMessage({ id, html, pageUrl } satisfies PageTagJob)
            return Effect.sync(() => {
              clearTimeout(job.timer)
              thread.jobs.delete(id)
              if (thread.jobs.size === 0) thread.worker.unref()
            })
          })
      }
    }
  )
