import type * as HttpApiError from "@effect/platform/HttpApiError"
import { parseMarker } from "./Coded.ts"
import { ApiError, type ErrorItem } from "./ApiError.ts"
import { ErrorCatalogue, type ErrorStatus, isErrorCode } from "./ErrorCatalogue.ts"

const describePath = (path: ReadonlyArray<PropertyKey>) => (path.length === 0 ? "body" : path.map(String).join("."))

/**
 * What is wrong with a field no code covers, from the kind of problem alone: the framework's own
 * message repeats the value it was given (and the schema's internals), and an answer never repeats
 * the request.
 */
const problemOf = (issue: HttpApiError.HttpApiDecodeError["issues"][number]) => {
  switch (issue._tag) {
    case "Missing":
      return "is required"
    case "Unexpected":
      return "is not expected"
    case "Type":
      return "has the wrong type"
    default:
      return "is invalid"
  }
}

/** Every problem of a request that failed to decode, as catalogue errors (see `Platform/Coded.ts`). */
export const fromDecodeError = (error: HttpApiError.HttpApiDecodeError): ApiError => {
  const items: Array<ErrorItem> = []
  // One item per code, but 10153 once per field and problem (an optional field's wrong value fails each member of its union).
  const seen = new Set<string>()
  let status: ErrorStatus | undefined
  // A wrong value of an optional field fails every member of its union; the marked one names the code.
  const markedPaths = new Set(
    error.issues.filter((issue) => parseMarker(issue.message) !== undefined).map((issue) => describePath(issue.path))
  )
  for (const issue of error.issues) {
    const marked = parseMarker(issue.message)
    const field = describePath(issue.path)
    if (marked === undefined && markedPaths.has(field)) continue
    const item =
      marked !== undefined && isErrorCode(marked.code)
        ? ApiError.item(marked.code, field)
        : ApiError.item(10153, `${field} ${problemOf(issue)}`)
    const key = item.code === 10153 ? `${item.code} ${item.message}` : String(item.code)
    if (seen.has(key)) continue
    seen.add(key)
    items.push(item)
    status ??= (marked?.status as ErrorStatus | undefined) ?? (isErrorCode(item.code) ? ErrorCatalogue[item.code].status : 400)
  }
  const [first, ...rest] = items
  return first === undefined ? ApiError.of(10153, "body is invalid") : ApiError.all([first, ...rest], status)
}
