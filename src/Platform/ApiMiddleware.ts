import * as Headers from "@effect/platform/Headers"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpMethod from "@effect/platform/HttpMethod"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as HttpApp from "@effect/platform/HttpApp"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Context, Effect, LogLevel, Option } from "effect"
import { AppConfig } from "../Config.ts"
import { ApiError, ErrorItem } from "./ApiError.ts"
import { InvalidInput, isCodedFailure } from "./Failure.ts"
import { RateLimiter } from "./RateLimiter.ts"
import { databaseOutage } from "./Outage.ts"
import { ClientNetwork, clientNetwork } from "./ClientIp.ts"
import { ApiVersion } from "./ApiVersion.ts"
import { recordHttpRequest, recordUnavailable, unavailableReasonOf } from "./Metrics.ts"
import { apiAccessLine } from "./AccessLog.ts"
import { requestUserOf } from "./RequestUser.ts"
import { limitBody, MAX_BODY_BYTES, withBody } from "./BodyLimit.ts"
import { fromDecodeError } from "./DecodeErrors.ts"
import { apiRouteLabeller } from "./ApiRoute.ts"
import { redactedTarget } from "./RequestUrl.ts"
import { tracingOn } from "./Tracing.ts"
import { isV3Path, serveV3 } from "../V3/V3Adapter.ts"
import { registerServingFiber } from "./RequestFibers.ts"
import { randomUUID } from "node:crypto"

export { MAX_BODY_BYTES }

const OPERATIONAL_PATHS = new Set(["/healthz", "/readyz", "/metrics"])

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/

/**
 * The request's id for the access log and the `X-Request-Id` answer header: the one a proxy sent,
 * when it is a plain token of at most 64 characters (nginx's `$request_id`, a UUID), else a new one.
 */
const requestIdOf = (sent: string | undefined) => (sent !== undefined && REQUEST_ID.test(sent) ? sent : randomUUID())

/**
 * The context the API serves a request in: the request as handed on, its client network and the API
 * version it came in through, added in one copy of the services. A `provideService` each would copy
 * them as often, and replacing the request alone leaves the context's size unchanged, which makes
 * Effect compare every service of the old and the new context (FiberRefs' update) as it installs the
 * context and again as it restores it.
 */
const servingContext = (context: Context.Context<never>, request: HttpServerRequest.HttpServerRequest, network: string, version: 3 | 4) => {
  const services = new Map(context.unsafeMap)
  services.set(HttpServerRequest.HttpServerRequest.key, request)
  services.set(ClientNetwork.key, network)
  services.set(ApiVersion.key, version)
  return Context.unsafeMake<HttpServerRequest.HttpServerRequest>(services)
}

const render = (error: ApiError) =>
  HttpServerResponse.unsafeJson(
    error.success === 0 ? { success: 0, errors: error.errors } : { errors: error.errors },
    {
      status: error.status,
      headers: error.retryAfter === undefined ? {} : { "retry-after": String(error.retryAfter) }
    }
  )

/** The token as the framework's bearer security hands it to Authentication: the header after `Bearer `. */
const presentedBearer = (request: HttpServerRequest.HttpServerRequest) => request.headers["authorization"]?.slice("Bearer ".length)

const sqlState = (error: SqlError): string =>
  typeof error.cause === "object" && error.cause !== null && "code" in error.cause ? String(error.cause.code) : ""

/**
 * The API takes JSON only. The framework would parse a multipart/form-data body as such,
 * and waits forever for one that is empty: such a request is refused before anything reads it.
 */
const isMultipart = (request: HttpServerRequest.HttpServerRequest) => {
  const type = (request.headers["content-type"] ?? "").toLowerCase()
  return HttpMethod.hasBody(request.method) && type.includes("multipart/form-data") && !type.includes("application/json")
}

/**
 * A body the framework would not read as JSON: a Content-Type that names another type (it reads
 * text as a string, a form as a record of strings, anything else as bytes, and decodes that against
 * the JSON schema: a form could create a link, bytes read as an empty object). No Content-Type reads
 * as JSON, as always.
 */
const isNotJson = (request: HttpServerRequest.HttpServerRequest) => {
  const type = (request.headers["content-type"] ?? "").toLowerCase().trim()
  return HttpMethod.hasBody(request.method) && type !== "" && !type.includes("application/json")
}

/**
 * The request as handed to the API when its body is not JSON: a body that fails to parse as JSON, so
 * that an endpoint reading one answers 400 10153 where it reads it (after the token and the path
 * ids, as for a malformed JSON body), and one reading none never sees it.
 */
const unparsableBody = (request: HttpServerRequest.HttpServerRequest) =>
  withBody(request.modify({ headers: Headers.set(request.headers, "content-type", "application/json") }), request.method, Buffer.from("-"))

const NOT_JSON_MESSAGE = "the request body must be JSON (Content-Type: application/json)"

const unavailable = (error: SqlError) =>
  /connect|terminat|timeout|ECONN|EPIPE|socket/i.test(`${error.message} ${String(error.cause)}`)

const items = ([first, ...rest]: InvalidInput["problems"]) =>
  [new ErrorItem(first), ...rest.map((problem) => new ErrorItem(problem))] as const

/** The first catalogue code of an error answer the framework rendered (a handler's declared error). */
const codeOf = (response: HttpServerResponse.HttpServerResponse): number | undefined => {
  const body = response.body
  const text = body._tag === "Uint8Array" ? new TextDecoder().decode(body.body) : undefined
  const code = text === undefined ? undefined : /"code"\s*:\s*(\d+)/.exec(text)
  return code === null || code === undefined ? undefined : Number(code[1])
}

/** Every failure that reaches the edge, as the catalogue error it is answered with. */
const toApiError = (cause: Cause.Cause<unknown>, request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const failure = Cause.squash(cause)
    if (failure instanceof ApiError) return failure
    if (failure instanceof InvalidInput) return ApiError.all(items(failure.problems))
    if (isCodedFailure(failure)) return ApiError.all([new ErrorItem({ code: failure.code, message: failure.message })], failure.status)
    if (failure instanceof HttpApiError.HttpApiDecodeError) return fromDecodeError(failure)
    if (typeof failure === "object" && failure !== null && "_tag" in failure) {
      if (failure._tag === "RouteNotFound") return ApiError.of(10151, request.method, new URL(request.url, "http://x").pathname)
      if (failure._tag === "RequestError" && "cause" in failure) {
        if (String(failure.cause).includes("maxBytes exceeded")) return ApiError.of(10152, String(MAX_BODY_BYTES))
        return ApiError.of(10153, isNotJson(request) ? NOT_JSON_MESSAGE : "the request body is not valid JSON")
      }
    }
    // Every recursive walk over a request (the framework's decode messages, ours) follows the input:
    // only input nested too deeply overflows the stack.
    if (failure instanceof RangeError && failure.message.includes("call stack")) {
      return ApiError.of(10153, "the request is nested too deeply")
    }
    // PostgreSQL text and jsonb cannot hold a NUL character; only client input can bring one.
    if (failure instanceof SqlError && ["22021", "22P05"].includes(sqlState(failure))) {
      return ApiError.of(10153, "text must not contain NUL characters")
    }
    if (failure instanceof SqlError && unavailable(failure)) {
      yield* databaseOutage.failed(failure)
      return ApiError.of(10902)
    }
    yield* Effect.logError("unexpected failure", cause)
    return ApiError.of(10999)
  })

/**
 * The edge of the API, around routing: the rate limits (per client network and per token, with their
 * RateLimit header fields on every answer), then body size (413 from Content-Length
 * before anything is read, see `BodyLimit.ts`), metrics, and the one place where every
 * failure (ours, the framework's decode errors, unknown routes, defects) becomes `{errors: [...]}`
 * (every 503 with `Retry-After: 1`), and the access log line (only built when LOG_LEVEL lets info through).
 */
export const ApiMiddlewareLive = HttpApiBuilder.middleware(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const limiter = yield* RateLimiter
    const routeOf = apiRouteLabeller()
    const traced = tracingOn(config)
    const accessLog = LogLevel.lessThanEqual(config.logLevel, LogLevel.Info)
    return (app: HttpApp.Default) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        yield* registerServingFiber(request)
        const started = performance.now()
        const url = new URL(request.url, "http://x")
        const path = url.pathname
        // The server span took the URL as it came: credentials in a query or a path stay out of traces.
        if (traced) {
          const shown = redactedTarget(request.url)
          if (shown !== request.url) {
            const mark = shown.indexOf("?")
            const full = Option.getOrUndefined(HttpServerRequest.toURL(request))
            yield* Effect.annotateCurrentSpan({
              "url.path": mark === -1 ? shown : shown.slice(0, mark),
              ...(mark === -1 ? {} : { "url.query": shown.slice(mark + 1) }),
              ...(full === undefined ? {} : { "url.full": `${full.origin}${shown}` })
            })
          }
        }
        const client = config.trustProxy.clientIp(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"])
        const network = clientNetwork(client)
        const limit = OPERATIONAL_PATHS.has(path) ? undefined : yield* limiter.consume(network, presentedBearer(request))
        const run = Effect.gen(function* () {
          if (limit !== undefined && !limit.allowed) return yield* new ApiError({ ...ApiError.of(10900), retryAfter: 1 })
          const limited = yield* limitBody(request)
          if (isMultipart(limited)) return yield* ApiError.of(10153, "the request body must be JSON, not multipart/form-data")
          const served = isNotJson(limited) ? unparsableBody(limited) : limited
          const serve = (handed: HttpServerRequest.HttpServerRequest, version: 3 | 4) =>
            Effect.mapInputContext(app, (context: Context.Context<never>) => servingContext(context, handed, network, version))
          return yield* HttpIncomingMessage.withMaxBodySize(
            isV3Path(path) ? serveV3(serve, served) : serve(served, 4),
            Option.some(MAX_BODY_BYTES)
          )
        })
        let failedWith: ApiError | undefined
        const answered = yield* run.pipe(
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause)
              ? Effect.interrupt
              : Effect.map(toApiError(cause, request), (error) => {
                  failedWith = error
                  return render(error)
                })
          )
        )
        const retried =
          answered.status === 503 && answered.headers["retry-after"] === undefined
            ? HttpServerResponse.setHeader(answered, "retry-after", "1")
            : answered
        const response = limit === undefined ? retried : HttpServerResponse.setHeaders(retried, limit.headers)
        const route = routeOf(request.method, path)
        const seconds = (performance.now() - started) / 1000
        recordHttpRequest(route, request.method, response.status, seconds)
        if (response.status === 503) recordUnavailable(unavailableReasonOf(failedWith?.errors[0].code ?? codeOf(response)))
        const requestId = requestIdOf(request.headers["x-request-id"])
        if (accessLog) {
          yield* apiAccessLine({
            method: request.method,
            url: request.url,
            route,
            status: response.status,
            seconds,
            requestId,
            client,
            userId: requestUserOf(request),
            probe: OPERATIONAL_PATHS.has(path)
          })
        }
        return HttpServerResponse.setHeader(response, "x-request-id", requestId)
      })
  })
)
