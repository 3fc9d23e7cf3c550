import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { ApiError } from "../Platform/ApiError.ts"
import { prometheusText } from "../Platform/Metrics.ts"
import { Shutdown } from "../Platform/Shutdown.ts"

export const OperationsHttpLive = HttpApiBuilder.group(Api, "operations", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const shutdown = yield* Shutdown
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" }))
      .handle("readyz", () =>
        shutdown.draining
          ? Effect.fail(ApiError.of(10903))
          : sql`SELECT 1`.pipe(
          Effect.timeout("2 seconds"),
          Effect.as({ status: "ready" }),
          Effect.catchAll(() => Effect.fail(ApiError.of(10902)))
        )
      )
      .handle("metrics", () => prometheusText)
  })
)
