import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Layer } from "effect"
import { Api } from "../Api.ts"
import { ApiError } from "../Platform/ApiError.ts"
import { prometheusText } from "../Platform/Metrics.ts"
import { AppConfig } from "../Config.ts"
import { poolFamilies } from "../Platform/PoolMetrics.ts"
import { DatabasePool } from "../Sql/Database.ts"
import { metricsAccess } from "./MetricsAccess.ts"
import { Readiness } from "./Readiness.ts"

export const OperationsHttpLive = HttpApiBuilder.group(Api, "operations", (handlers) =>
  Effect.gen(function* () {
    const readiness = yield* Readiness
    const database = yield* DatabasePool
    const access = metricsAccess((yield* AppConfig).metricsToken)
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" }))
      .handle("readyz", () =>
        readiness.check.pipe(
          Effect.as({ status: "ready" }),
          Effect.mapError((failure) => ApiError.of(failure.code))
        )
      )
      .handle("metrics", () => Effect.zipRight(access, Effect.suspend(() => prometheusText(poolFamilies(database.pool)))))
  })
).pipe(Layer.provide(Readiness.Default))
