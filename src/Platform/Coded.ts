import { Schema } from "effect"
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
 * A positive integer id in a path segment, written as one (not " 1", "01", "1.0", "1e0"
 * or "0x1", which `NumberFromString` would read); anything else reports `code` (404 unless told).
 */
export const PathId = (code: ErrorCode, status?: ErrorStatus) =>
  Schema.compose(Schema.String.pipe(Schema.pattern(/^[1-9][0-9]*$/)), Schema.NumberFromString).pipe(
    Schema.int(),
    Schema.positive(),
    Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER),
    coded(code, status)
  )
