/**
 * The rules for a link's fields on create (E4) and update (E12) beyond their types: pure,
 * synchronous, no database.
 *
 * Types are checked once, by the request schemas (`LinkFields.ts`): a value of another type never
 * reaches a checker; it is an `Invalid` carrying its field's code, which the reader of the request
 * (`LinkInput.ts`, `LinkPatch.ts`) reports. So, for every checker here and in the files re-exported
 * below:
 * - it takes the field's decoded value (a string, a number, the tags given) and never throws;
 * - it returns `Either<Value, InputProblem>`: the cleaned value, or the code and message of the first
 *   rule the field breaks. One field has one problem; the reader collects the problems of all
 *   fields into one `InvalidInput`, so a request with several bad fields gets all their codes;
 * - a field left out or null is the reader's business (its default, or "clear it" on update): a
 *   checker only sees values that were given;
 * - lengths count Unicode code points, as people do.
 * Uniqueness (aliases, tag names) and existence (templates) are checked against the database by the caller.
 */
import { Either } from "effect"
import { type InputProblem, problem } from "./LinkErrors.ts"
import { codePointLength, hasLoneSurrogate, type LinkInputContext } from "./InputValues.ts"
import { parseHttpUrl } from "./Url.ts"

export * from "./Alias.ts"
export type { LinkInputContext } from "./InputValues.ts"
export * from "./LinkDates.ts"
export * from "./LinkTags.ts"
export * from "../Tags/Utm.ts"

export const MAX_NOTES_LENGTH = 1000
export const DEFAULT_REDIRECT_TYPE = 301

/** `url` (create, 10100) or `/url` (update, 10132): http(s), a valid host, no credentials, via `parseHttpUrl`, `http://` assumed. */
export const checkUrl = (text: string, context: LinkInputContext): Either.Either<string, InputProblem> => {
  const url = parseHttpUrl(text, { assumeHttp: true })
  return url !== undefined ? Either.right(url) : Either.left(problem(context === "create" ? 10100 : 10132))
}

/**
 * `notes`: at most 1000 characters, kept as given. Too long: 10106 / 10135. A NUL character or a
 * lone surrogate is 10105 / 10134, the code of a value that is not text: PostgreSQL text cannot hold
 * the one, UTF-8 not the other.
 */
export const checkNotes = (text: string, context: LinkInputContext): Either.Either<string, InputProblem> => {
  if (text.includes("\u0000") || hasLoneSurrogate(text)) return Either.left(problem(context === "create" ? 10105 : 10134))
  if (codePointLength(text) > MAX_NOTES_LENGTH) return Either.left(problem(context === "create" ? 10106 : 10135))
  return Either.right(text)
}

/**
 * `notify_on_click` has no code of its own for a bad value: 10100 and 10132-10135 name other fields
 * and 10131 says the path is unsupported, which it is not. So it is 10153 "request body invalid"
 * with the field named, as for every other field without a code of its own.
 */
export const notifyOnClickInvalid = (context: LinkInputContext): InputProblem =>
  problem(10153, `${context === "create" ? "" : "/"}notify_on_click: must be 0 or 1`)
