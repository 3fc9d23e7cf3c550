import { Either } from "effect"
import { oneYearAfter, type TimeRange } from "../Analytics/AnalyticsWindow.ts"
import { ExportWindowMissing, ExportWindowReversed, ExportWindowTooLong } from "./ExportErrors.ts"

/**
 * The window of a clicks export, `from` inclusive and `to` exclusive: both required, `to` after
 * `from` and at most one calendar year after it (a longer span is exported window by window).
 */
export const exportWindow = (
  from: number | undefined,
  to: number | undefined
): Either.Either<TimeRange, ExportWindowMissing | ExportWindowReversed | ExportWindowTooLong> => {
  if (from === undefined || to === undefined) return Either.left(ExportWindowMissing.of())
  if (to <= from) return Either.left(ExportWindowReversed.of())
  if (to > oneYearAfter(from)) return Either.left(ExportWindowTooLong.of())
  return Either.right({ from, to })
}
