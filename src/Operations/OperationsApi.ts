import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { answersAtEdge } from "../Platform/ApiError.ts"

const Status = Schema.Struct({ status: Schema.String })

export class OperationsApi extends HttpApiGroup.make("operations", { topLevel: true })
  .annotate(OpenApi.Description, "Health, readiness and metrics of an instance (not versioned, not rate limited)")
  .add(
    HttpApiEndpoint.get("healthz", "/healthz")
      .addSuccess(Status)
      .annotate(OpenApi.Summary, "Liveness")
      .annotate(OpenApi.Description, "The process answers: {status: ok}")
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Status)
      .addError(answersAtEdge(503, 10902, 10903))
      .annotate(OpenApi.Summary, "Readiness")
      .annotate(OpenApi.Description, "Ready to serve: the database answers and the instance is not stopping")
  )
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain; version=0.0.4; charset=utf-8" })))
      .addError(answersAtEdge(401, 10000))
      .annotate(OpenApi.Summary, "Prometheus metrics")
      .annotate(
        OpenApi.Description,
        "The service's metrics in the Prometheus text format; with METRICS_TOKEN set, only for `Authorization: Bearer <METRICS_TOKEN>` (else 401 10000)"
      )
  ) {}
