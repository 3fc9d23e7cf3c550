import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"
import { ErrorCatalogue, type ErrorCode, type ErrorStatus, formatMessage, isErrorCode } from "./ErrorCatalogue.ts"

export class ErrorItem extends Schema.Class<ErrorItem>("ErrorItem")({
  code: Schema.Int,
  message: Schema.String
}) {}

/**
 * Every failure the API answers with: one or more catalogue entries and the HTTP status of the first.
 * `success: 0` is part of the body of failed logins (E1, E2), as in the real API.
 */
export class ApiError extends Schema.TaggedError<ApiError>()("ApiError", {
  status: Schema.Literal(400, 401, 403, 404, 408, 413, 500, 503),
  errors: Schema.NonEmptyArray(ErrorItem),
  success: Schema.optional(Schema.Literal(0)),
  retryAfter: Schema.optional(Schema.Int)
}) {
  static item(code: ErrorCode, ...args: ReadonlyArray<string>): ErrorItem {
    return new ErrorItem({ code, message: formatMessage(ErrorCatalogue[code].message, args) })
  }

  static of(code: ErrorCode, ...args: ReadonlyArray<string>): ApiError {
    return new ApiError({ status: ErrorCatalogue[code].status, errors: [ApiError.item(code, ...args)] })
  }

  /** Several problems of one request, all reported; the status is the first one's. */
  static all(items: readonly [ErrorItem, ...Array<ErrorItem>], status?: ErrorStatus): ApiError {
    const first = ErrorCatalogue[items[0].code as ErrorCode]
    return new ApiError({ status: status ?? first?.status ?? 400, errors: items })
  }

  static withStatus(status: ErrorStatus, code: ErrorCode, ...args: ReadonlyArray<string>): ApiError {
    return new ApiError({ status, errors: [ApiError.item(code, ...args)] })
  }

  override get message(): string {
    return this.errors.map((e) => `${e.code} ${e.message}`).join("; ")
  }
}

/**
 * How an operation declares a failure that the API edge answers for it (not its handler): a status
 * and the catalogue codes it can carry, as the body `{errors: [{code, message}]}` whose codes are
 * these literals, so the OpenAPI document lists them and a derived client decodes them as `ApiError`.
 */
export const answersAtEdge = (status: ErrorStatus, ...codes: readonly [ErrorCode, ...Array<ErrorCode>]) =>
  Schema.transform(
    Schema.Struct({ errors: Schema.NonEmptyArray(Schema.Struct({ code: Schema.Literal(...codes), message: Schema.String })) }),
    Schema.typeSchema(ApiError).pipe(Schema.filter((error) => error.status === status)),
    {
      strict: true,
      decode: (wire) => new ApiError({ status, errors: [new ErrorItem(wire.errors[0]), ...wire.errors.slice(1).map((item) => new ErrorItem(item))] }),
      encode: (error) => {
        const item = (problem: ErrorItem) => ({ code: codes.find((code) => code === problem.code) ?? codes[0], message: problem.message })
        const [first, ...rest] = error.errors
        return { errors: [item(first), ...rest.map(item)] as const }
      }
    }
  ).annotations(HttpApiSchema.annotations({ status, description: codes.map((code) => `${code}: ${ErrorCatalogue[code].description}`).join("; ") }))

/** `answersAtEdge` for many operations: one schema in the document's components, named by its status and codes. */
const shared = (status: ErrorStatus, ...codes: readonly [ErrorCode, ...Array<ErrorCode>]) =>
  answersAtEdge(status, ...codes).annotations({ identifier: `ApiError${status}_${codes.join("_")}` })

/** Every operation: a defect or an unexpected failure, logged (10999). */
export const InternalError = shared(500, 10999)

/**
 * Every operation under /api: the rate limit (10900), the database not answering, or not within
 * API_DEADLINE_SECONDS (10902), this instance stopping (10903); always with `Retry-After`.
 */
export const Unavailable = shared(503, 10900, 10902, 10903)

/** Every operation that reads a request body: more than 64 KiB (10152). */
export const BodyTooLarge = shared(413, 10152)

/** Every operation that reads a request body: not all of it arrived within API_DEADLINE_SECONDS (10154). */
export const BodyTimeout = shared(408, 10154)

type Json = Readonly<Record<string, unknown>>

const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const json = (value: unknown): Json => (isJson(value) ? value : {})

const STATUS_TEXT: Readonly<Record<string, string>> = {
  "400": "Invalid input",
  "401": "Invalid authentication",
  "403": "Insufficient privileges or plan",
  "404": "Not found",
  "408": "Request body not received in time",
  "413": "Request body too large",
  "500": "Internal error",
  "503": "Rate limited or temporarily unavailable"
}

/** The framework's decode error, which the edge always answers as catalogue errors (`Platform/DecodeErrors.ts`). */
const DECODE_ERROR_SCHEMAS = ["HttpApiDecodeError", "Issue", "PropertyKey"]
const DECODE_ERROR_REF = "#/components/schemas/HttpApiDecodeError"

/** A response schema without the framework's decode error among its alternatives; undefined when nothing else is left. */
const withoutDecodeError = (schema: unknown): unknown => {
  const s = json(schema)
  if (s.$ref === DECODE_ERROR_REF) return undefined
  if (!Array.isArray(s.anyOf)) return schema
  const rest: ReadonlyArray<unknown> = s.anyOf.filter((alternative) => json(alternative).$ref !== DECODE_ERROR_REF)
  return rest.length === 0 ? undefined : rest.length === 1 ? rest[0] : { ...s, anyOf: rest }
}

/** The catalogue codes an error body schema allows (every alternative, references followed), sorted. */
export const codesOfSchema = (schemas: Json, schema: unknown): ReadonlyArray<number> => {
  const codes = new Set<number>()
  const resolve = (value: unknown): Json => {
    const ref = json(value).$ref
    return typeof ref === "string" && ref.startsWith("#/components/schemas/") ? json(schemas[ref.slice("#/components/schemas/".length)]) : json(value)
  }
  const visit = (value: unknown): void => {
    const resolved = resolve(value)
    for (const alternative of Array.isArray(resolved.anyOf) ? resolved.anyOf : []) visit(alternative)
    const errors = json(json(resolved.properties).errors)
    for (const item of [errors.items, ...(Array.isArray(errors.prefixItems) ? errors.prefixItems : [])]) {
      const code = json(json(resolve(item).properties).code)
      for (const value of Array.isArray(code.enum) ? code.enum : []) if (typeof value === "number") codes.add(value)
    }
  }
  visit(schema)
  return [...codes].sort((a, b) => a - b)
}

const RETRY_AFTER = {
  "Retry-After": {
    description: "Seconds to wait before trying again (1)",
    schema: { type: "integer", minimum: 1 }
  }
}

/** One error response of an operation: the catalogue codes it carries in its description and `x-error-codes`. */
const describeErrorResponse = (schemas: Json, status: string, response: unknown): Json | undefined => {
  const content = json(json(response).content)
  const schema = withoutDecodeError(json(content["application/json"]).schema)
  if (schema === undefined) return undefined
  const codes = codesOfSchema(schemas, schema)
  const listed = codes.map((code) => (isErrorCode(code) ? `${code} (${ErrorCatalogue[code].description})` : String(code))).join(", ")
  return {
    description: `${STATUS_TEXT[status] ?? "Error"}: ${listed}. The body is {errors: [{code, message}]}, one item per problem.`,
    "x-error-codes": codes,
    ...(status === "503" ? { headers: RETRY_AFTER } : {}),
    content: { ...content, "application/json": { ...json(content["application/json"]), schema } }
  }
}

/**
 * The OpenAPI document as the edge answers: every error response names the catalogue codes it can
 * carry (description and `x-error-codes`), 503 answers carry `Retry-After`, and the framework's
 * decode error, which never reaches a client, is gone.
 */
export const documentErrors = (spec: Record<string, unknown>): Record<string, unknown> => {
  const components = json(spec.components)
  const schemas = json(components.schemas)
  const paths = Object.fromEntries(
    Object.entries(json(spec.paths)).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(json(item)).map(([method, operation]) => {
          const responses = Object.fromEntries(
            Object.entries(json(json(operation).responses)).flatMap(([status, response]) => {
              if (Number(status) < 400) return [[status, response]]
              const described = describeErrorResponse(schemas, status, response)
              return described === undefined ? [] : [[status, described]]
            })
          )
          return [method, { ...json(operation), responses }]
        })
      )
    ])
  )
  // The decode error first, then what only it used (its issues, their paths).
  const kept = DECODE_ERROR_SCHEMAS.reduce<Json>((rest, name) => {
    const others = Object.fromEntries(Object.entries(rest).filter(([other]) => other !== name))
    const used = JSON.stringify({ paths, others }).includes(`"#/components/schemas/${name}"`)
    return name !== "HttpApiDecodeError" && used ? rest : others
  }, schemas)
  return { ...spec, paths, components: { ...components, schemas: kept } }
}
