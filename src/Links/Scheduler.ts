import { SqlClient } from "@effect/sql"
import { Clock, Effect, Schedule } from "effect"
import { databaseOutage } from "../Platform/Outage.ts"

/** How often due links are looked for: well within the minute a due link may wait. */
export const SWEEP_INTERVAL = "15 seconds"

/**
 * Moves links whose `archive_on` or `delete_on` has come to `archived` or `deleted`, and links past
 * their settings' `expires_at` to `archived` (those visited meanwhile are archived by the redirect);
 * an archived link given a `delete_on` (E12) is deleted when it comes.
 * One UPDATE per sweep: with several instances sweeping at once, row locks let each link move once.
 */
export class Scheduler extends Effect.Service<Scheduler>()("Scheduler", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The links moved by this sweep, with their new status. */
    const sweep = Effect.gen(function* () {
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      return yield* sql<{ id: number; status: "archived" | "deleted" }>`
        UPDATE links
        SET status = CASE WHEN delete_on <= to_timestamp(${now}) THEN 'deleted' ELSE 'archived' END, modified = now()
        WHERE (status = 'active' AND coalesce(archive_on, delete_on) <= to_timestamp(${now}))
           OR (status = 'archived' AND delete_on <= to_timestamp(${now}))
           OR (status = 'active' AND id IN (
                 SELECT link_id FROM link_settings
                 WHERE (settings->>'expires_at') IS NOT NULL AND (settings->>'expires_at')::bigint <= ${now}))
        RETURNING id, status`
    })

    yield* sweep.pipe(
      Effect.tap((moved) => (moved.length === 0 ? Effect.void : Effect.logInfo(`scheduler moved ${moved.length} links`))),
      Effect.tap(() => databaseOutage.succeeded),
      Effect.catchAllCause(databaseOutage.failed),
      Effect.repeat(Schedule.spaced(SWEEP_INTERVAL)),
      Effect.forkScoped
    )
    return { sweep } as const
  })
}) {}
