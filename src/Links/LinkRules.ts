/**
 * The rules for a link's fields on create (E4) and update (E12): pure, synchronous, no database.
 *
 * Convention, for every checker here and in the files re-exported below:
 * - it takes the field's raw JSON value as `unknown` and never throws;
 * - it returns `Either<Value, InputProblem>`: the cleaned value, or the code and message of the first
 *   rule the field breaks. One field has one problem; the use case collects the problems of all
 *   fields into one `InvalidInput`, so a request with several bad fields gets all their codes;
 * - `undefined` and `null` both mean "not given" and give the field's default; `checkUrl` and
 *   `checkAlias` have none and report absence as invalid (the caller knows whether the field is
 *   required, or generated);
 * - an integer field takes a JSON integer or its canonical decimal string ("301"), as E12 allows
 *   "string or integer" values and clients of the real service send both;
 * - lengths count Unicode code points, as people do.
 * Uniqueness (aliases, tag names) and existence (templates) are checked against the database by the caller.
 */
import { Either } from "effect"
import { type InputProblem, problem } from "./LinkErrors.ts"
import { codePointLength, hasLoneSurrogate, integerFrom, isAbsent, type LinkInputContext } from "./InputValues.ts"
import { parseHttpUrl } from "./Url.ts"

export * from "./Alias.ts"
export type { LinkInputContext } from "./InputValues.ts"
export * from "./LinkDates.ts"
export * from "./LinkTags.ts"
export * from "../Tags/Utm.ts"

export const MAX_NOTES_LENGTH = 1000
export const DEFAULT_REDIRECT_TYPE = 301

/** `url` (create, 10100) or `/url` (update, 10132): http(s), a valid host, no credentials, via `parseHttpUrl`, `http://` assumed. */
export const checkUrl = (raw: unknown, context: LinkInputContext): Either.Either<string, InputProblem> => {
  const url = typeof raw === "string" ? parseHttpUrl(raw, { assumeHttp: true }) : undefined
  return url !== undefined ? Either.right(url) : Either.left(problem(context === "create" ? 10100 : 10132))
}

/**
 * `notes`: a string of at most 1000 characters, kept as given; "" when absent (so null on update
 * clears them). Not a string: 10105 / 10134; too long: 10106 / 10135. A NUL character or a lone
 * surrogate counts as "not a string": PostgreSQL text cannot hold the one, UTF-8 not the other.
 */
export const checkNotes = (raw: unknown, context: LinkInputContext): Either.Either<string, InputProblem> => {
  if (isAbsent(raw)) return Either.right("")
  if (typeof raw !== "string" || raw.includes("\u0000") || hasLoneSurrogate(raw)) {
    return Either.left(problem(context === "create" ? 10105 : 10134))
  }
  if (codePointLength(raw) > MAX_NOTES_LENGTH) return Either.left(problem(context === "create" ? 10106 : 10135))
  return Either.right(raw)
}

/** `redirect_type`: 301 or 307 (or "301", "307"); 301, the permanent redirect, when absent; else 10115. */
export const checkRedirectType = (raw: unknown): Either.Either<301 | 307, InputProblem> => {
  if (isAbsent(raw)) return Either.right(DEFAULT_REDIRECT_TYPE)
  const type = integerFrom(raw)
  return type === 301 || type === 307 ? Either.right(type) : Either.left(problem(10115))
}

/**
 * `notify_on_click` (create) or `/notify_on_click` (update): 0 or 1, "0" or "1", false or true; false
 * when absent. The specification has no code for a bad value: 10100 and 10132-10135 name other
 * fields and 10131 says the path is unsupported, which it is not. So it is 10153 "request body
 * invalid" with the field named, as for every other field without a code of its own.
 */
export const checkNotifyOnClick = (raw: unknown, context: LinkInputContext): Either.Either<boolean, InputProblem> => {
  if (isAbsent(raw)) return Either.right(false)
  const flag = typeof raw === "boolean" ? Number(raw) : integerFrom(raw)
  if (flag === 0 || flag === 1) return Either.right(flag === 1)
  return Either.left(problem(10153, `${context === "create" ? "" : "/"}notify_on_click: must be 0 or 1`))
}
