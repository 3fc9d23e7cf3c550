import { SqlClient } from "@effect/sql"
import { Clock, Effect, Schedule } from "effect"
import { HOURLY_ROLLUP_DAYS } from "./Rollups.ts"

const DAY = 86_400

/**
 * Deletes the hourly rollups of the hours reports no longer read (older than today and the
 * HOURLY_ROLLUP_DAYS days before it, with a day to spare), at start and every hour. Instances
 * pruning at once delete the same rows: whichever comes second finds none.
 */
export class HourlyRollupPruner extends Effect.Service<HourlyRollupPruner>()("HourlyRollupPruner", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** How many rows were deleted from both tables. */
    const prune = Effect.gen(function* () {
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const before = Math.floor(now / DAY) * DAY - (HOURLY_ROLLUP_DAYS + 1) * DAY
      const links = yield* sql`DELETE FROM click_rollups_hour WHERE hour < to_timestamp(${before}) RETURNING 1`
      const owners = yield* sql`DELETE FROM click_rollups_user_hour WHERE hour < to_timestamp(${before}) RETURNING 1`
      return links.length + owners.length
    })

    yield* prune.pipe(
      Effect.tap((deleted) => (deleted === 0 ? Effect.void : Effect.logDebug(`pruned ${deleted} hourly rollup rows`))),
      Effect.catchAllCause((cause) => Effect.logWarning("pruning the hourly rollups failed; retrying in an hour", cause)),
      Effect.repeat(Schedule.spaced("1 hour")),
      Effect.forkScoped
    )
    return { prune } as const
  })
}) {}
