import { Either, ParseResult, Schema, SchemaAST } from "effect"
import type { ErrorCode, ErrorStatus } from "./ErrorCatalogue.ts"

/**
 * Request schemas name the documented error code of each way a field can be wrong. The framework
 * only hands decode failures over as `{path, message}` issues, so the code travels in the message as
 * a marker (`#10100`, or `#10101@400` to override the catalogue status) that `Platform/DecodeErrors.ts`
 * turns back into catalogue errors.
 */
export const marker = (code: ErrorCode, status?: ErrorStatus) => (status === undefined ? `#${code}` : `#${code}@${status}`)

export const parseMarker = (message: string): { readonly code: number; readonly status: number | undefined } | undefined => {
  const match = /^#(\d{5})(?:@(\d{3}))?$/.exec(message)
  return match === null ? undefined : { code: Number(match[1]), status: match[2] === undefined ? undefined : Number(match[2]) }
}

/** Any failure of this schema reports `code` (inner refinements may name their own codes). */
export const coded =
  (code: ErrorCode, status?: ErrorStatus) =>
  <A, I, R>(schema: Schema.Schema<A, I, R>): Schema.Schema<A, I, R> =>
    schema.annotations({ message: () => ({ message: marker(code, status), override: true }) })

/** A refinement failure message naming its code, for `Schema.maxLength(n, codedMessage(10103))` and the like. */
export const codedMessage = (code: ErrorCode, status?: ErrorStatus) => ({ message: () => marker(code, status) })

/** A required property whose absence reports `code`. */
export const required = <A, I, R>(schema: Schema.Schema<A, I, R>, code: ErrorCode, status?: ErrorStatus) =>
  Schema.propertySignature(schema).annotations({ missingMessage: () => marker(code, status) })

/**
 * A parameter of the path or query string read as an integer (from its text): documented as one,
 * with its range, instead of as the string it is decoded from.
 */
export const documentedInteger =
  (minimum: number, maximum: number) =>
  <A, I, R>(schema: Schema.Schema<A, I, R>): Schema.Schema<A, I, R> =>
    schema.annotations({ jsonSchema: { type: "integer", minimum, maximum } })

/**
 * A positive integer id in a path segment, written as one (not " 1", "01", "1.0", "1e0"
 * or "0x1", which `NumberFromString` would read); anything else reports `code` (404 unless told).
 */
export const PathId = (code: ErrorCode, status?: ErrorStatus) =>
  Schema.compose(Schema.String.pipe(Schema.pattern(/^[1-9][0-9]*$/)), Schema.NumberFromString).pipe(
    Schema.int(),
    Schema.positive(),
    Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER),
    coded(code, status),
    documentedInteger(1, Number.MAX_SAFE_INTEGER)
  )

/**
 * A field value that does not have its field's type: the code its field names for that. The value
 * itself is not kept: nothing past decoding reads a value of unknown type. Only decoding makes one;
 * a client encoding one fails.
 */
export class Invalid {
  private constructor(readonly code: ErrorCode) {}
  static of(code: ErrorCode): Invalid {
    return new Invalid(code)
  }
}

const InvalidValue = Schema.declare((value: unknown): value is Invalid => value instanceof Invalid, { identifier: "Invalid" })

/**
 * A field whose decoding never fails: a value of `schema`'s type, or an `Invalid` with `code`, so
 * the use case reports it beside the problems its rules find in the other fields (a failed decode
 * would stop the request before them). The OpenAPI document and the encoded side are `schema`'s own.
 * The decode error is not formatted: its messages would walk the value, however deep.
 */
export const lenient = <A, I>(code: ErrorCode, schema: Schema.Schema<A, I>): Schema.Schema<A | Invalid, unknown> =>
  Schema.transformOrFail(Schema.Unknown, Schema.Union(Schema.typeSchema(schema), InvalidValue), {
    strict: true,
    decode: (raw) => ParseResult.succeed(Either.getOrElse(Schema.decodeUnknownEither(schema)(raw), () => Invalid.of(code))),
    encode: (value, _, ast) =>
      value instanceof Invalid
        ? ParseResult.fail(new ParseResult.Forbidden(ast, value, "an invalid value cannot be sent"))
        : ParseResult.encodeUnknown(schema)(value)
  }).annotations({ [SchemaAST.SurrogateAnnotationId]: schema.ast })

export const isInvalid = (value: unknown): value is Invalid => value instanceof Invalid
