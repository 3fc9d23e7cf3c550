import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Failure } from "../Platform/Failure.ts"
import { databaseOutage } from "../Platform/Outage.ts"
import { Shutdown } from "../Platform/Shutdown.ts"

export class Stopping extends Failure("Stopping", 10903) {}
export class DatabaseUnreachable extends Failure("DatabaseUnreachable", 10902) {}

/** How long `/readyz` waits for the database's answer. */
const PROBE_TIMEOUT = "2 seconds"

/**
 * Whether this instance should take traffic: it is not stopping and the database answers `SELECT 1`
 * within 2 s. Each probe tells the database outage bookkeeping (one warning when it goes, one when it
 * is back), so an idle instance still notices.
 */
export class Readiness extends Effect.Service<Readiness>()("Readiness", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const shutdown = yield* Shutdown
    const check = Effect.suspend((): Effect.Effect<void, Stopping | DatabaseUnreachable> =>
      shutdown.draining
        ? Effect.fail(Stopping.of())
        : sql`SELECT 1`.pipe(
            Effect.timeout(PROBE_TIMEOUT),
            Effect.tapBoth({ onFailure: databaseOutage.failed, onSuccess: () => databaseOutage.succeeded }),
            Effect.asVoid,
            Effect.catchAll(() => Effect.fail(DatabaseUnreachable.of()))
          )
    )
    return { check } as const
  })
}) {}
