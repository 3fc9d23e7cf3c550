import { Either, Option } from "effect"
import type { InvalidInput } from "../Platform/Failure.ts"
import { type InputProblem, invalidInputOf, problem } from "./LinkErrors.ts"
import type { LinkOperation, PatchPath } from "./LinkFields.ts"
import { type Invalid, isInvalid } from "../Platform/Coded.ts"
import {
  appendUtmValues,
  checkAlias,
  checkNotes,
  checkScheduleDate,
  checkScheduleExclusive,
  checkUrl,
  notifyOnClickInvalid,
  type ScheduleField,
  type UtmValues
} from "./LinkRules.ts"

/**
 * E12's body: a JSON array of 1 to 6 operations `{op, path, value}` in the JSON Patch style, as
 * `LinkFields.ts` decodes it (each wrong type an `Invalid` in its place), read into the changes they
 * ask for, or every problem they have. Pure; the database (alias taken, the link's stored dates and
 * UTM values) and the 404 check are the use case's part.
 *
 * - `op`: "replace", the default when absent or null; anything else 10130 naming the field
 *   ("Operation given in 0.op not supported"), never the value.
 * - `path`: one of `PATCH_PATHS`, exactly (leading slash, lower case); anything else 10131 naming the
 *   field. An operation with a bad op or path has its value left unchecked.
 * - An element that is not an object: 10130 naming the element ("given in 0").
 * - Values by the rules of LinkRules with context "update": /url 10132, /alias 10133, /notes
 *   10134/10135 (null or no value clears them), /notify_on_click 0 or 1 (10153, a value is required),
 *   /delete_on and /archive_on a future Unix timestamp (integer or decimal string) or null / no value
 *   to clear (10111-10114).
 * - A path given twice: the operations apply in order, so the last one wins; every one is checked.
 * - An empty array or more than 6 operations: 10153 "body: an array of 1 to 6 operations expected".
 * Problems are sorted by code; identical ones are reported once.
 */
export const MAX_OPERATIONS = 6

/** What a link update changes; absent keys stay as they are. `null` dates clear the date. */
export interface LinkChanges {
  readonly url?: string
  readonly alias?: string
  readonly notes?: string
  readonly notifyOnClick?: boolean
  readonly archiveOn?: number | null
  readonly deleteOn?: number | null
}

export interface PatchReading {
  readonly changes: LinkChanges
  readonly problems: ReadonlyArray<InputProblem>
  /** Paths whose (last) value is invalid: their value after the patch is unknown. */
  readonly invalid: ReadonlySet<PatchPath>
}

/** Where a wrong value was given, for a message that must not repeat it: `given in 0.op`. */
const givenIn = (index: number, key?: string) => `given in ${key === undefined ? index : `${index}.${key}`}`

const byCode = (problems: ReadonlyArray<InputProblem>): Array<InputProblem> => {
  const seen = new Set<string>()
  const unique = problems.filter((item) => {
    const key = `${item.code} ${item.message}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
  return unique.sort((a, b) => a.code - b.code)
}

/** An operation on one of the service's paths (its `op` aside). */
type PathOperation = Exclude<LinkOperation, { readonly path: Invalid }>

const onPath = (operation: LinkOperation): operation is PathOperation => !isInvalid(operation.path)

/** A value's type error as the problem it is. */
const typeError = (value: Invalid): Either.Either<never, InputProblem> => Either.left(problem(value.code))

/** A date's value: a future timestamp, or null (left out or null) to clear the date. */
const readDate = (value: number | null | undefined | Invalid, field: ScheduleField, now: number) =>
  value === undefined || value === null ? Either.right(null) : isInvalid(value) ? typeError(value) : checkScheduleDate(value, field, now)

/** One operation's value checked against its path's rule. */
const readValue = (operation: PathOperation, now: number): Either.Either<Partial<LinkChanges>, InputProblem> => {
  switch (operation.path) {
    case "/url":
      return isInvalid(operation.value) ? typeError(operation.value) : Either.map(checkUrl(operation.value, "update"), (url) => ({ url }))
    case "/alias":
      return isInvalid(operation.value) ? typeError(operation.value) : Either.map(checkAlias(operation.value, "update"), (alias) => ({ alias }))
    case "/notes":
      return isInvalid(operation.value)
        ? typeError(operation.value)
        : Either.map(checkNotes(operation.value ?? "", "update"), (notes) => ({ notes }))
    case "/notify_on_click":
      return isInvalid(operation.value) ? Either.left(notifyOnClickInvalid("update")) : Either.right({ notifyOnClick: operation.value })
    case "/delete_on":
      return Either.map(readDate(operation.value, "delete_on", now), (deleteOn) => ({ deleteOn }))
    case "/archive_on":
      return Either.map(readDate(operation.value, "archive_on", now), (archiveOn) => ({ archiveOn }))
  }
}

/** The body of E12 read into changes and problems; `now` is Unix seconds. */
export const readLinkPatch = (body: ReadonlyArray<LinkOperation | Invalid>, now: number): PatchReading => {
  if (body.length === 0 || body.length > MAX_OPERATIONS) {
    return {
      changes: {},
      problems: [problem(10153, `body: an array of 1 to ${MAX_OPERATIONS} operations expected`)],
      invalid: new Set()
    }
  }
  const problems: Array<InputProblem> = []
  const invalid = new Set<PatchPath>()
  let changes: LinkChanges = {}
  for (const [index, operation] of body.entries()) {
    if (isInvalid(operation)) {
      problems.push(problem(10130, givenIn(index)))
      continue
    }
    const opOk = !isInvalid(operation.op)
    if (!opOk) problems.push(problem(10130, givenIn(index, "op")))
    if (!onPath(operation)) {
      problems.push(problem(10131, givenIn(index, "path")))
      continue
    }
    if (!opOk) continue
    const { path } = operation
    Either.match(readValue(operation, now), {
      onLeft: (item) => {
        problems.push(item)
        invalid.add(path)
      },
      onRight: (change) => {
        invalid.delete(path)
        changes = { ...changes, ...change }
      }
    })
  }
  return { changes, problems: byCode(problems), invalid }
}

/** What the use case knows of the stored link. */
export interface StoredLink {
  readonly url: string
  readonly archiveOn: number | null
  readonly deleteOn: number | null
  /** The link's UTM values in the order they go into its redirect URL. */
  readonly utmValues: UtmValues
}

export interface LinkUpdate extends LinkChanges {
  readonly redirectUrl?: string
}

/**
 * The patch checked against the stored link: 10116 when the link would end with both dates (a date
 * given with an invalid value is not counted), and the new redirect URL (the new url with the link's
 * UTM values; too long for them: 10132). `extra` are problems found elsewhere (alias taken, 404
 * check). Either the update to run, or every problem sorted by code.
 */
export const planLinkUpdate = (
  reading: PatchReading,
  stored: StoredLink,
  extra: ReadonlyArray<InputProblem> = []
): Either.Either<LinkUpdate, InvalidInput> => {
  const problems = [...reading.problems, ...extra]
  const { changes } = reading
  const dateKnown = reading.invalid.has("/archive_on") === false && reading.invalid.has("/delete_on") === false
  if (dateKnown) {
    const archiveOn = changes.archiveOn !== undefined ? changes.archiveOn : stored.archiveOn
    const deleteOn = changes.deleteOn !== undefined ? changes.deleteOn : stored.deleteOn
    Either.match(checkScheduleExclusive(archiveOn, deleteOn), { onLeft: (item) => problems.push(item), onRight: () => undefined })
  }
  let redirectUrl: string | undefined
  if (changes.url !== undefined) {
    redirectUrl = Either.getOrElse(appendUtmValues(changes.url, stored.utmValues), () => {
      problems.push(problem(10132))
      return changes.url!
    })
  }
  return Option.match(invalidInputOf(byCode(problems)), {
    onSome: Either.left,
    onNone: () => Either.right(redirectUrl === undefined ? changes : { ...changes, redirectUrl })
  })
}

/**
 * A link's stored UTM values (`utm_fields`, an object, whose key order jsonb does not keep) in the
 * order of its template's fields; values of codes the template no longer has follow, by code.
 */
export const orderUtmValues = (
  stored: Readonly<Record<string, string>> | null,
  templateCodes: ReadonlyArray<string>
): UtmValues => {
  if (stored === null) return []
  const known = templateCodes.filter((code) => typeof stored[code] === "string" && stored[code] !== "")
  const rest = Object.keys(stored)
    .filter((code) => !templateCodes.includes(code) && typeof stored[code] === "string" && stored[code] !== "")
    .sort()
  return [...known, ...rest].map((code) => [code, stored[code]!] as [string, string])
}
