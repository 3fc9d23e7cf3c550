import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { ErrorCatalogue, type ErrorCode, type ErrorStatus, formatMessage } from "./ErrorCatalogue.ts"

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

const Wire = Schema.Struct({
  success: Schema.optional(Schema.Literal(0)),
  errors: Schema.NonEmptyArray(ErrorItem)
})

const wireFor = (status: ErrorStatus, description: string) =>
  Schema.transform(Wire, ApiError.pipe(Schema.filter((e) => e.status === status)), {
    strict: true,
    decode: (wire) => new ApiError({ status, errors: wire.errors, ...(wire.success === 0 ? { success: 0 } : {}) }),
    encode: (error) => ({ errors: error.errors, ...(error.success === 0 ? { success: 0 as const } : {}) })
  }).annotations(HttpApiSchema.annotations({ status, description }))

/** The wire forms of `ApiError`, one per status: `{errors: [{code, message}]}` without the tag. */
export const ApiErrorBodies = {
  400: wireFor(400, "Invalid input"),
  401: wireFor(401, "Invalid authentication"),
  403: wireFor(403, "Insufficient privileges or plan"),
  404: wireFor(404, "Not found"),
  408: wireFor(408, "Request body not received in time"),
  413: wireFor(413, "Request body too large"),
  500: wireFor(500, "Internal error"),
  503: wireFor(503, "Rate limited or temporarily unavailable")
} as const
