import { Cause, Duration, Effect, Metric, Schedule } from "effect"

/** What the service depends on, as `dependency_up` labels it. */
export type Dependency = "database" | "smtp" | "redis" | "otlp"

const FIRST_RETRY = Duration.seconds(5)
const LAST_RETRY = Duration.minutes(5)

/** Retries after 5 s, then twice as long each time, at most every 5 minutes. */
export const retryBackoff = Schedule.exponential(FIRST_RETRY).pipe(Schedule.union(Schedule.spaced(LAST_RETRY)))

/** The wait before attempt `failures + 1` after `failures` failures in a row: `retryBackoff`'s. */
export const backoffMillis = (failures: number) =>
  Math.min(Duration.toMillis(FIRST_RETRY) * 2 ** Math.max(0, failures - 1), Duration.toMillis(LAST_RETRY))

const upGauge = Metric.gauge("dependency_up", {
  description: "1 while a dependency answers, 0 from its first failure until it answers again (database, smtp, redis, otlp)"
})

/** One line about what went wrong, without a stack: the cause of a failure logged once, not every retry. */
export const reasonOf = (failure: unknown): string => {
  const error = Cause.isCause(failure) ? Cause.squash(failure) : failure
  if (error instanceof Error) {
    const nested = "cause" in error && error.cause instanceof Error ? `: ${error.cause.message}` : ""
    return `${error.message}${nested}`
  }
  return typeof error === "string" ? error : String(error)
}

export interface Outage {
  /** A failure: one warning when the dependency was up, debug lines while it stays down. */
  readonly failed: (failure: unknown) => Effect.Effect<void>
  /** A success: one info line when the dependency was down. */
  readonly succeeded: Effect.Effect<void>
  readonly isDown: () => boolean
}

/**
 * The up/down state of one dependency in this thread, so that an outage logs one warning when it
 * starts and one line when it ends, instead of a stack per attempt. `dependency_up` follows it.
 */
export const makeOutage = (dependency: Dependency, what: string): Outage => {
  const gauge = Metric.tagged(upGauge, "dependency", dependency)
  gauge.unsafeUpdate(1, [])
  let downSince: number | undefined
  let failures = 0
  return {
    failed: (failure) =>
      Effect.suspend(() => {
        failures++
        const reason = reasonOf(failure)
        if (downSince !== undefined) return Effect.logDebug(`${what} still unavailable: ${reason}`).pipe(Effect.annotateLogs({ failures }))
        downSince = Date.now()
        gauge.unsafeUpdate(0, [])
        return Effect.logWarning(`${what} unavailable: ${reason}; retrying with backoff (5 s doubling to 5 min), no further warning until it is back`).pipe(
          Effect.annotateLogs({ dependency })
        )
      }),
    succeeded: Effect.suspend(() => {
      if (downSince === undefined) return Effect.void
      const seconds = Math.round((Date.now() - downSince) / 100) / 10
      const failed = failures
      downSince = undefined
      failures = 0
      gauge.unsafeUpdate(1, [])
      return Effect.logInfo(`${what} available again after ${seconds} s`).pipe(Effect.annotateLogs({ dependency, failures: failed }))
    }),
    isDown: () => downSince !== undefined
  }
}

/** The database as this thread sees it. */
export const databaseOutage = makeOutage("database", "the database")
