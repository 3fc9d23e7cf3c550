import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { ApiError } from "../Platform/ApiError.ts"

const digest = (text: string) => createHash("sha256").update(text).digest()

/**
 * Lets the scrape through when METRICS_TOKEN is unset or the request carries `Authorization: Bearer
 * <METRICS_TOKEN>`; otherwise 401 10000. Digests of equal length are compared in constant time, so
 * the answer's timing tells nothing of the token.
 */
export const metricsAccess = (token: Option.Option<Redacted.Redacted<string>>) => {
  if (Option.isNone(token)) return Effect.void
  const expected = digest(`Bearer ${Redacted.value(token.value)}`)
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    timingSafeEqual(digest(request.headers["authorization"] ?? ""), expected) ? Effect.void : Effect.fail(ApiError.of(10000))
  )
}
