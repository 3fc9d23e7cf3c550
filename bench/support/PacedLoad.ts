import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { type LatencySummary, summarize } from "./Latency.ts"
import type { PacedOutcome, PacedSettings } from "./PacedClient.ts"

const CLIENT = fileURLToPath(new URL("./PacedClient.ts", import.meta.url))

export interface PacedResult {
  readonly statuses: Readonly<Record<string, number>>
  readonly errors: number
  readonly timeouts: number
  readonly unsent: number
  /** Answers of the warm-up by status (left out of every other figure), and the slowest of them, ms. */
  readonly warmupStatuses: Readonly<Record<string, number>>
  readonly warmupMaxMs: number
  readonly requestsPerSecond: number
  /** From each request's write to the end of its answer. */
  readonly fromWrite: LatencySummary
  /** From the time each request was due to the end of its answer (the wait for a free connection included). */
  readonly fromDue: LatencySummary
  readonly generatorCpuSeconds: number
}

/**
 * `settings.rate` requests a second for `settings.seconds`, evenly spaced, from a child process of
 * its own (`PacedClient.ts`), so the generator has an event loop to itself as the servers do.
 */
export const pacedLoad = (settings: PacedSettings): Promise<PacedResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", CLIENT, JSON.stringify(settings)], { stdio: ["ignore", "pipe", "inherit"] })
    const chunks: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk))
    child.once("error", reject)
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`the paced load generator exited with code ${code}`))
      const outcome: PacedOutcome = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      const ends = Float64Array.from(outcome.ends)
      const none = new Float64Array(0)
      resolve({
        statuses: outcome.statuses,
        errors: outcome.errors,
        timeouts: outcome.timeouts,
        unsent: outcome.unsent,
        warmupStatuses: outcome.warmupStatuses,
        warmupMaxMs: outcome.warmupMaxMs,
        requestsPerSecond: outcome.completedAfterWarmup / outcome.elapsedSeconds,
        fromWrite: summarize(Float64Array.from(outcome.fromWrite), ends, none),
        fromDue: summarize(Float64Array.from(outcome.fromDue), ends, none),
        generatorCpuSeconds: outcome.cpuSeconds
      })
    })
  })
