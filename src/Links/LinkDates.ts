import { Either } from "effect"
import { type InputProblem, problem } from "./LinkErrors.ts"
import { integerFrom, isAbsent } from "./InputValues.ts"

/** 9999-12-31T23:59:59Z, the last second most date libraries and clients can show. */
export const MAX_TIMESTAMP = 253_402_300_799

const DAY = 86_400

export type ScheduleField = "archive_on" | "delete_on"

const CODES = {
  delete_on: { invalid: 10111, past: 10112 },
  archive_on: { invalid: 10113, past: 10114 }
} as const

const RELATIVE_DAYS = /^(-?)([0-9]{1,7})d$/

/** The absolute timestamp a value names, or undefined when it names none. */
const timestampOf = (raw: unknown, now: number, relativeDays: boolean): number | undefined => {
  const relative = relativeDays && typeof raw === "string" ? RELATIVE_DAYS.exec(raw) : null
  if (relative !== null) {
    // A day offset is never "invalid" for being far in the past: it is reported as past (10112/10114).
    const at = now + (relative[1] === "-" ? -1 : 1) * Number(relative[2]) * DAY
    return at <= MAX_TIMESTAMP ? at : undefined
  }
  const at = integerFrom(raw)
  return at !== undefined && at >= 0 && at <= MAX_TIMESTAMP ? at : undefined
}

/**
 * `archive_on` / `delete_on` on create or by `/archive_on`, `/delete_on` on update. Accepts a Unix
 * timestamp in seconds as an integer or a decimal string; with `relativeDays` (version 3 only) also
 * "Nd" / "-Nd", `now` plus or minus N days. `now` is Unix seconds. Absent or null gives null (no date,
 * or clear it on update). Negative, fractional, beyond year 9999 or anything else: 10111 (delete_on)
 * / 10113 (archive_on); not strictly after `now`: 10112 / 10114.
 */
export const checkScheduleDate = (
  raw: unknown,
  field: ScheduleField,
  now: number,
  options: { readonly relativeDays: boolean }
): Either.Either<number | null, InputProblem> => {
  if (isAbsent(raw)) return Either.right(null)
  const at = timestampOf(raw, now, options.relativeDays)
  if (at === undefined) return Either.left(problem(CODES[field].invalid))
  return at > now ? Either.right(at) : Either.left(problem(CODES[field].past))
}

/**
 * A link has at most one of the two dates (10116). On update, pass the values the link will have
 * after the whole patch (the stored ones where the patch does not touch them).
 */
export const checkScheduleExclusive = (
  archiveOn: number | null,
  deleteOn: number | null
): Either.Either<{ readonly archiveOn: number | null; readonly deleteOn: number | null }, InputProblem> =>
  archiveOn !== null && deleteOn !== null ? Either.left(problem(10116)) : Either.right({ archiveOn, deleteOn })
