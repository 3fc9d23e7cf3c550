import { Either } from "effect"
import { type InputProblem, problem } from "../Links/LinkErrors.ts"
import { codePointLength, hasControlCharacter, hasLoneSurrogate } from "../Links/InputValues.ts"

export const MAX_UTM_VALUE_LENGTH = 200

/**
 * Longest redirect URL: UTM values may take a link past the 4096 of its `url`, but not past the
 * 8 KiB request line that common web servers accept from the visitors it is sent to.
 */
export const MAX_REDIRECT_URL_LENGTH = 8000

/** What the rules need of a UTM template (a `UtmTemplate` fits). */
export interface UtmTemplateFields {
  readonly fields: ReadonlyArray<{ readonly field_code: string; readonly required: boolean }>
}

/** Field code and value, in template field order. */
export type UtmValues = ReadonlyArray<[string, string]>

const badValue = (value: string): boolean =>
  codePointLength(value) > MAX_UTM_VALUE_LENGTH || hasControlCharacter(value) || hasLoneSurrogate(value)

/**
 * `utm_fields` (the field codes given, to strings: the schema's part) against the link's template:
 * every key a field code of the template, every value at most 200 characters without control
 * characters, every required field given and not blank. Values are trimmed; blank optional ones are
 * left out. Fields without a template (an empty object aside) are 10110 as well: 10108 is about the
 * id, and there is none. Every problem is 10110.
 */
export const checkUtmFields = (
  template: UtmTemplateFields | undefined,
  given: Readonly<Record<string, string>>
): Either.Either<UtmValues, InputProblem> => {
  const invalid = Either.left(problem(10110))
  const entries = Object.entries(given)
  if (template === undefined) return entries.length === 0 ? Either.right([]) : invalid
  const codes = new Set(template.fields.map((field) => field.field_code))
  const values = new Map<string, string>()
  for (const [code, value] of entries) {
    if (!codes.has(code) || badValue(value)) return invalid
    values.set(code, value.trim())
  }
  const chosen: Array<[string, string]> = []
  for (const field of template.fields) {
    const value = values.get(field.field_code) ?? ""
    if (value !== "") chosen.push([field.field_code, value])
    else if (field.required) return invalid
  }
  return Either.right(chosen)
}

const keyOf = (pair: string): string => [...new URLSearchParams(pair).keys()][0] ?? ""

/**
 * `url` with the values as query parameters after its own, before any fragment, form-encoded
 * (space as +). A parameter the URL already has under a field's code is dropped: the template wins.
 * The URL's other parameters are kept exactly as written. Over `MAX_REDIRECT_URL_LENGTH`: 10110;
 * a `url` that is not an absolute URL: 10100.
 */
export const appendUtmValues = (url: string, values: UtmValues): Either.Either<string, InputProblem> => {
  if (values.length === 0) return Either.right(url)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return Either.left(problem(10100))
  }
  const replaced = new Set(values.map(([code]) => code))
  const kept = parsed.search
    .slice(1)
    .split("&")
    .filter((pair) => pair !== "" && !replaced.has(keyOf(pair)))
  parsed.search = [...kept, new URLSearchParams(values).toString()].join("&")
  return parsed.href.length <= MAX_REDIRECT_URL_LENGTH ? Either.right(parsed.href) : Either.left(problem(10110))
}

/** The link's `redirect_url`: `checkUtmFields`, then `appendUtmValues` (codes 10110, 10100). */
export const buildRedirectUrl = (
  url: string,
  template: UtmTemplateFields | undefined,
  utmFields: Readonly<Record<string, string>>
): Either.Either<string, InputProblem> => Either.flatMap(checkUtmFields(template, utmFields), (values) => appendUtmValues(url, values))
