import { Either } from "effect"
import { type InputProblem, problem } from "./LinkErrors.ts"

/** 9999-12-31T23:59:59Z, the last second most date libraries and clients can show. */
export const MAX_TIMESTAMP = 253_402_300_799

export type ScheduleField = "archive_on" | "delete_on"

const PAST = { delete_on: 10112, archive_on: 10114 } as const

/**
 * `archive_on` / `delete_on` on create or by `/archive_on`, `/delete_on` on update: a Unix timestamp
 * in seconds (whole, 0 to the end of year 9999: the schema's part, 10111 / 10113 otherwise) strictly
 * after `now`, Unix seconds; else 10112 / 10114.
 */
export const checkScheduleDate = (at: number, field: ScheduleField, now: number): Either.Either<number, InputProblem> =>
  at > now ? Either.right(at) : Either.left(problem(PAST[field]))

/**
 * A link has at most one of the two dates (10116). On update, pass the values the link will have
 * after the whole patch (the stored ones where the patch does not touch them).
 */
export const checkScheduleExclusive = (
  archiveOn: number | null,
  deleteOn: number | null
): Either.Either<{ readonly archiveOn: number | null; readonly deleteOn: number | null }, InputProblem> =>
  archiveOn !== null && deleteOn !== null ? Either.left(problem(10116)) : Either.right({ archiveOn, deleteOn })
