import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Clock, Effect, Option, Schema } from "effect"
import { ApiError, type ErrorItem } from "../Platform/ApiError.ts"
import { isPlainObject } from "../Links/InputValues.ts"
import { withBody } from "../Platform/BodyLimit.ts"
import { OPENAPI_PATH, V3_DOCS_PATH } from "../Platform/PagePaths.ts"
import { openApiV3 } from "./V3OpenApi.ts"

/**
 * Version 3 is version 4 seen through this adapter: the request is mapped to its
 * version 4 form and served by the same handlers (with the version 3 page size), and the answer is
 * mapped back. Nothing else in the service knows about version 3.
 */
const V3 = "/api/v3"
const V4 = "/api/v4"

/**
 * A path the adapter serves: one under /api/v3 but version 3's docs page, which is served as it is
 * (it describes version 3's document, it is no version 4 route).
 */
export const isV3Path = (path: string) => (path === V3 || path.startsWith(`${V3}/`)) && path !== V3_DOCS_PATH

/** The routes whose answer differs beyond link and domain fields. */
type Route = "create" | "update" | "oneLink" | "other"

const LINK = /^\/api\/v4\/[^/]+\/links\/[^/]+$/
const CREATE = /^\/api\/v4\/[^/]+\/links$/
const EXISTS = /^\/api\/v4\/[^/]+\/links\/exists$/

const routeOf = (method: string, path: string): Route => {
  if (method === "POST" && CREATE.test(path)) return "create"
  if (method === "PATCH" && LINK.test(path)) return "update"
  if (method === "GET" && (EXISTS.test(path) || (LINK.test(path) && !path.endsWith("/clicked")))) return "oneLink"
  return "other"
}

/** Fields version 3 does not have on create: refused, each named. */
const NOT_IN_V3 = ["rand_alias_length", "override_404_check", "notify_on_click"] as const

/** A create body's fields; their values are version 4's to decode. */
const CreateFields = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const DAY_OFFSET = /^(-?)([0-9]{1,5})d$/

/** The Unix time `text` names as a version 3 day offset ("30d", "-2d": `now` plus or minus N days), if it is one. */
export const timestampOfDayOffset = (text: string, now: number): number | undefined => {
  const offset = DAY_OFFSET.exec(text)
  return offset === null ? undefined : now + Number(offset[2]) * (offset[1] === "-" ? -1 : 1) * 86_400
}

/**
 * The E12 operations version 3 reads before version 4 does: `/notify_on_click`, which it does not
 * have, and dates given as day offsets. Other properties are kept as sent (`preserve`); every value
 * is version 4's to decode.
 */
const NotifyOperation = Schema.Struct({ path: Schema.Literal("/notify_on_click") })
const DayOffsetOperation = Schema.Struct({ path: Schema.Literal("/delete_on", "/archive_on"), value: Schema.String.pipe(Schema.pattern(DAY_OFFSET)) })
const preserve = { onExcessProperty: "preserve" } as const

/** E12 operations: no `/notify_on_click`; `Nd` / `-Nd` dates become timestamps relative to now. */
const updateOperations = (operations: ReadonlyArray<unknown>, now: number) => {
  const problems: Array<ErrorItem> = []
  const mapped = operations.map((operation) => {
    if (Option.isSome(Schema.decodeUnknownOption(NotifyOperation)(operation))) problems.push(ApiError.item(10131, "/notify_on_click"))
    return Option.match(Schema.decodeUnknownOption(DayOffsetOperation, preserve)(operation), {
      onNone: () => operation,
      onSome: (dated) => ({ ...dated, value: timestampOfDayOffset(dated.value, now) })
    })
  })
  return { problems, mapped }
}

/** The version 4 body of a version 3 request, or the problems that refuse it. */
const adaptBody = (route: Route, body: unknown, now: number): { problems: Array<ErrorItem>; body: unknown } => {
  const fields = route === "create" ? Schema.decodeUnknownOption(CreateFields)(body) : Option.none()
  if (Option.isSome(fields)) {
    const problems = NOT_IN_V3.filter((field) => field in fields.value).map((field) =>
      ApiError.item(10153, `${field} is not accepted by version 3`)
    )
    return { problems, body }
  }
  if (route === "update" && Array.isArray(body)) {
    const { problems, mapped } = updateOperations(body, now)
    return { problems, body: mapped }
  }
  return { problems: [], body }
}

const DOMAIN_FIELDS = ["id", "domain", "created", "modified", "default", "type"] as const

/** A version 4 object as version 3 shows it: links without notify_on_click, domains with fewer fields. */
const objectV3 = (item: unknown): unknown => {
  if (!isPlainObject(item)) return item
  if ("short_link" in item) {
    const { notify_on_click: _, ...link } = item
    return link
  }
  if ("has_ssl" in item && "domain" in item) {
    return Object.fromEntries(DOMAIN_FIELDS.filter((field) => field in item).map((field) => [field, item[field]]))
  }
  return item
}

const v3Url = (value: unknown) => (typeof value === "string" ? value.replace(`${V4}/`, `${V3}/`) : value)

const bodyV3 = (route: Route, body: unknown): unknown => {
  if (!isPlainObject(body)) return body
  const { new_link: _, ...rest } = body
  const answer: Record<string, unknown> = route === "create" ? rest : { ...body }
  if (Array.isArray(answer.objects)) {
    const objects = answer.objects.map(objectV3)
    answer.objects = route !== "other" && objects.length === 1 ? objects[0] : objects
  }
  if (isPlainObject(answer.meta)) answer.meta = { ...answer.meta, path: v3Url(answer.meta.path) }
  if (isPlainObject(answer.links)) {
    answer.links = Object.fromEntries(Object.entries(answer.links).map(([key, value]) => [key, v3Url(value)]))
  }
  return answer
}

const decoder = new TextDecoder()

/** A successful JSON answer mapped by `map`; anything else (errors, images) as it is. */
const mapJson = (response: HttpServerResponse.HttpServerResponse, map: (body: unknown) => unknown) => {
  const type = response.headers["content-type"] ?? response.body.contentType ?? ""
  if (response.status >= 300 || response.body._tag !== "Uint8Array" || !type.startsWith("application/json")) return response
  const { "content-type": _type, "content-length": _length, ...headers } = response.headers
  return HttpServerResponse.unsafeJson(map(JSON.parse(decoder.decode(response.body.body))), { status: response.status, headers })
}

/**
 * The version 4 application, serving `request` as the API `version` (its page size) in the context
 * the edge builds for a request.
 */
export type Serve = (request: HttpServerRequest.HttpServerRequest, version: 3 | 4) => Effect.Effect<HttpServerResponse.HttpServerResponse>

/** Serves a version 3 request (its path under /api/v3) with the version 4 application. */
export const serveV3 = (serve: Serve, request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    // The target as sent: a URL object would resolve "..", "." and "\\" that version 4 routes as they are.
    const mark = request.url.indexOf("?")
    const pathname = mark === -1 ? request.url : request.url.slice(0, mark)
    const search = mark === -1 ? "" : request.url.slice(mark)
    const path = `${V4}${pathname.slice(V3.length)}`
    if (path === OPENAPI_PATH) {
      const response = yield* serve(request.modify({ url: path }), 4)
      return mapJson(response, openApiV3)
    }
    const route = routeOf(request.method, path)
    let adapted = request.modify({ url: `${path}${search}` })
    if (route === "create" || route === "update") {
      const text = yield* request.text
      const parsed = yield* Effect.try(() => JSON.parse(text) as unknown).pipe(Effect.option)
      if (parsed._tag === "Some") {
        const { problems, body } = adaptBody(route, parsed.value, Math.floor((yield* Clock.currentTimeMillis) / 1000))
        const [first, ...rest] = problems
        if (first !== undefined) return yield* ApiError.all([first, ...rest])
        adapted = withBody(adapted, request.method, Buffer.from(JSON.stringify(body)))
      } else {
        adapted = withBody(adapted, request.method, Buffer.from(text))
      }
    }
    const response = yield* serve(adapted, 3)
    return mapJson(response, (body) => bodyV3(route, body))
  })
