import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

const Status = Schema.Struct({ status: Schema.String })

export class OperationsApi extends HttpApiGroup.make("operations", { topLevel: true })
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Status))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Status))
  .add(
    HttpApiEndpoint.get("metrics", "/metrics").addSuccess(
      Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain; version=0.0.4; charset=utf-8" }))
    )
  ) {}
