import { readFileSync } from "node:fs"

/** Time a thread spent on a core and runnable but waiting for one, in seconds. */
export interface ThreadTime {
  readonly cpu: number
  readonly runQueueWait: number
}

const SCHEDSTAT = "/proc/thread-self/schedstat"

/**
 * The calling thread's totals since it started, from Linux's /proc/thread-self/schedstat (on-core
 * ns, run-queue wait ns, timeslices); undefined where there is no such file. Read synchronously:
 * an async read would run on a libuv pool thread and answer for that thread.
 */
const readThreadTime = (): ThreadTime | undefined => {
  let text: string
  try {
    text = readFileSync(SCHEDSTAT, "utf8")
  } catch {
    return undefined
  }
  const [cpu, wait] = text.trim().split(/\s+/).map(Number)
  return cpu === undefined || wait === undefined || !Number.isFinite(cpu) || !Number.isFinite(wait)
    ? undefined
    : { cpu: cpu / 1e9, runQueueWait: wait / 1e9 }
}

/**
 * The calling thread's time, in slices: each `take` answers what was added since the previous one
 * (the first: since the thread started); undefined where the OS does not tell.
 */
export const watchThreadTime = () => {
  let previous: ThreadTime = { cpu: 0, runQueueWait: 0 }
  return {
    take: (): ThreadTime | undefined => {
      const now = readThreadTime()
      if (now === undefined) return undefined
      const slice = { cpu: now.cpu - previous.cpu, runQueueWait: now.runQueueWait - previous.runQueueWait }
      previous = now
      return slice
    }
  }
}
