import { parentPort } from "node:worker_threads"
import { type PageTags, pageTags } from "./PageTags.ts"

/** A page whose tags are asked for (PageTagThread.ts). */
export interface PageTagJob {
  readonly id: number
  readonly html: string
  readonly pageUrl: string
}

/** Its tags; null when it has none. */
export interface PageTagReply {
  readonly id: number
  readonly tags: PageTags | null
}

/** What the thread posts: "ready" once, when it listens, then a reply for each job. */
export type FromPageTagWorker = "ready" | PageTagReply

const isJob = (message: unknown): message is PageTagJob =>
  typeof message === "object" &&
  message !== null &&
  "id" in message &&
  typeof message.id === "number" &&
  "html" in message &&
  typeof message.html === "string" &&
  "pageUrl" in message &&
  typeof message.pageUrl === "string"

// The thread that reads destination pages' tags: untrusted markup is never parsed on the thread that
// answers redirects.
const port = parentPort
if (port !== null) {
  port.on("message", (message: unknown) => {
    if (isJob(message)) port.postMessage({ id: message.id, tags: pageTags(message.html, message.pageUrl) ?? null } satisfies FromPageTagWorker)
  })
  port.postMessage("ready" satisfies FromPageTagWorker)
}
