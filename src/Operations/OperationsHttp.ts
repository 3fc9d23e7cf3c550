import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { ApiError } from "../Platform/ApiError.ts"
import { prometheusText } from "../Platform/Metrics.ts"
import { Shutdown } from "../Platform/Shutdown.ts"
import { AppConfig } from "../Config.ts"
import { poolFamilies } from "../Platform/PoolMetrics.ts"
import { DatabasePool } from "../Sql/Database.ts"
import { metricsAccess } from "./MetricsAccess.ts"
import { databaseOutage } from "../Platform/Outage.ts"

export const OperationsHttpLive = HttpApiBuilder.group(Api, "operations", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const shutdown = yield* Shutdown
    const database = yield* DatabasePool
    const access = metricsAccess((yield* AppConfig).metricsToken)
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" }))
      .handle("readyz", () =>
        shutdown.draining
          ? Effect.fail(ApiError.of(10903))
          : sql`SELECT 1`.pipe(
          Effect.timeout("2 seconds"),
          Effect.tapBoth({ onFailure: databaseOutage.failed, onSuccess: () => databaseOutage.succeeded }),
          Effect.as({ status: "ready" }),
          Effect.catchAll(() => Effect.fail(ApiError.of(10902)))
        )
      )
      .handle("metrics", () => Effect.zipRight(access, Effect.suspend(() => prometheusText(poolFamilies(database.pool)))))
  })
)
