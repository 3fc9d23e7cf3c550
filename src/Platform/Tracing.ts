import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import type * as Resource from "@effect/opentelemetry/Resource"
import { trace, type Context as OtelContext, type SpanKind as OtelSpanKind } from "@opentelemetry/api"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  SamplingDecision,
  type SpanExporter,
  TraceIdRatioBasedSampler
} from "@opentelemetry/sdk-trace-base"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect, Exit, Layer, Option, Runtime, type Tracer } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { AppConfig, type AppConfigShape, type TraceSamplerName } from "../Config.ts"
import { apiRouteLabeller } from "./ApiRoute.ts"
import { makeOutage } from "./Outage.ts"
import { statementNames } from "./StatementSpans.ts"
import { packageVersion } from "./ProcessMetrics.ts"

/** The OTEL_TRACES_SAMPLER sampler, built from the validated configuration (`Config.ts`). */
const samplerOf = (name: TraceSamplerName, ratio: number): Sampler => {
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler()
    case "always_off":
      return new AlwaysOffSampler()
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio)
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) })
  }
}

/**
 * Statements of no request (the scheduler's, the pruner's, the change feed's polls) would each be a
 * trace of one span every few seconds: a SQL span without a parent is never recorded.
 */
const withoutLoneStatements = (sampler: Sampler): Sampler => ({
  shouldSample: (context: OtelContext, traceId: string, spanName: string, spanKind: OtelSpanKind, attributes, links) =>
    spanName.startsWith("sql.") && trace.getSpanContext(context) === undefined
      ? { decision: SamplingDecision.NOT_RECORD }
      : sampler.shouldSample(context, traceId, spanName, spanKind, attributes, links),
  toString: () => `WithoutLoneStatements{${sampler.toString()}}`
})

/** The exporter, telling the log once when the collector stops taking spans and once when it takes them again. */
const watched = (exporter: SpanExporter, report: (error: Error | undefined) => void): SpanExporter => ({
  export: (spans: Array<ReadableSpan>, done) =>
    exporter.export(spans, (result) => {
      report(result.error)
      done(result)
    }),
  shutdown: () => exporter.shutdown(),
  forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve()
})

/** How long the stop waits for the last spans to reach the collector. */
const FLUSH_TIMEOUT_MS = 3_000
/** One export's wait for the collector, below the exporter's default (10 s): spans are worth less than a prompt stop. */
const EXPORT_TIMEOUT_MS = 5_000

/** Whether traces are exported: `OTEL_EXPORTER_OTLP_ENDPOINT` (or its traces variant) is set. */
export const tracingOn = (config: AppConfigShape) => Option.isSome(config.otlpTracesEndpoint)

/**
 * OpenTelemetry traces over OTLP/HTTP (JSON) when an endpoint is set, through `@effect/opentelemetry`:
 * every Effect span (the API's server spans, SQL statements, the 404 check, hashing, e-mail, Redis)
 * becomes an OpenTelemetry span, batched and sent in the background, so that a slow or absent
 * collector never holds a request (spans beyond the batch queue's 2048 are dropped). Closing the
 * layer flushes what is queued, for at most 3 s. Unset, nothing is built and Effect's own tracer
 * stays, as before.
 */
export const TracingLive: Layer.Layer<Resource.Resource, never, AppConfig> = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isNone(config.otlpTracesEndpoint)) return NodeSdk.layerEmpty
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const outage = makeOutage("otlp", "the OpenTelemetry collector (spans dropped meanwhile)")
    const exporter = watched(new OTLPTraceExporter({ url: config.otlpTracesEndpoint.value, timeoutMillis: EXPORT_TIMEOUT_MS }), (error) => {
      if (error !== undefined || outage.isDown()) runFork(error === undefined ? outage.succeeded : outage.failed(error))
    })
    const serviceName = Option.getOrElse(config.otelServiceName, () => config.otelResourceAttributes["service.name"] ?? "link-shortener")
    return NodeSdk.layer(() => ({
      spanProcessor: [statementNames, new BatchSpanProcessor(exporter)],
      tracerConfig: { sampler: withoutLoneStatements(samplerOf(config.otelTracesSampler, config.otelTracesSamplerArg)) },
      resource: { serviceName, serviceVersion: packageVersion(), attributes: config.otelResourceAttributes },
      shutdownTimeout: FLUSH_TIMEOUT_MS
    }))
  })
)

/** API paths whose requests get no span: probes and scrapes every few seconds would be most of the traces. */
const UNTRACED_PATHS = new Set(["/healthz", "/readyz", "/metrics"])

/** Whether the framework's server span is skipped for a request: always while tracing is off. */
export const untracedRequest = (config: AppConfigShape) => {
  if (!tracingOn(config)) return () => true
  return (request: HttpServerRequest.HttpServerRequest) => UNTRACED_PATHS.has(new URL(request.url, "http://x").pathname)
}

/** Server spans named as the conventions ask, `POST /api/v4/links`: the method and the route template. */
export const serverSpanName = () => {
  const routeOf = apiRouteLabeller()
  return (request: HttpServerRequest.HttpServerRequest) => {
    const route = routeOf(request.method, new URL(request.url, "http://x").pathname)
    return route === "unmatched" ? request.method : `${request.method} ${route}`
  }
}

const NANOS_PER_MILLI = 1_000_000n

/**
 * A span for one in `REDIRECT_TRACE_RATIO` of the redirects, made once the answer is sent from what
 * the listener measured: the redirect path itself is not touched. Undefined when tracing is off or
 * the ratio is 0, so that the listener's only cost is testing for it.
 */
export const redirectSpans = (config: AppConfigShape, tracer: Tracer.Tracer) => {
  const ratio = config.redirectTraceRatio
  if (!tracingOn(config) || ratio === 0) return undefined
  return (request: IncomingMessage, response: ServerResponse, seconds: number) => {
    if (Math.random() >= ratio) return
    const end = BigInt(Date.now()) * NANOS_PER_MILLI
    const start = end - BigInt(Math.round(seconds * 1e9))
    const url = request.url ?? "/"
    const mark = url.indexOf("?")
    const path = mark === -1 ? url : url.slice(0, mark)
    const route = path === "/" ? "/" : "/:alias"
    const span = tracer.span(`${request.method ?? "GET"} ${route}`, Option.none(), Context.empty(), [], start, "server", { root: true })
    span.attribute("http.request.method", request.method ?? "GET")
    span.attribute("http.route", route)
    span.attribute("url.path", path)
    if (request.headers.host !== undefined) span.attribute("server.address", request.headers.host)
    span.attribute("http.response.status_code", response.statusCode)
    span.end(end, Exit.void)
  }
}
