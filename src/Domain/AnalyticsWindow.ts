import { Either } from "effect"

const DAY = 86_400

/** A report's time range in Unix seconds, `to` exclusive (spec "Analytics conventions"). */
export interface AnalyticsWindow {
  readonly from: number
  readonly to: number
}

export const startOfDay = (seconds: number) => Math.floor(seconds / DAY) * DAY

/** The same instant one calendar year later (29 February goes to 1 March). */
const oneYearAfter = (seconds: number) => {
  const date = new Date(seconds * 1000)
  date.setUTCFullYear(date.getUTCFullYear() + 1)
  return Math.floor(date.getTime() / 1000)
}

/**
 * The window of a request: neither bound gives the start of the UTC day a week ago to the end of
 * today; `from` alone one year after it; `to` alone is 10503; `to` before `from` or more than a
 * year after it is 10502.
 */
export const analyticsWindow = (
  now: number,
  from: number | undefined,
  to: number | undefined
): Either.Either<AnalyticsWindow, 10502 | 10503> => {
  if (from === undefined && to === undefined) {
    const today = startOfDay(now)
    return Either.right({ from: today - 7 * DAY, to: today + DAY })
  }
  if (from === undefined) return Either.left(10503)
  if (to === undefined) return Either.right({ from, to: oneYearAfter(from) })
  if (to < from || to > oneYearAfter(from)) return Either.left(10502)
  return Either.right({ from, to })
}

/**
 * How a window is counted: whole UTC days `[firstDay, endDay)` from the daily rollups, and the
 * partial days at its edges (`edges`, each `[from, to)` within one day) from the clicks themselves.
 */
export interface WindowPlan {
  readonly firstDay: number
  readonly endDay: number
  readonly edges: ReadonlyArray<AnalyticsWindow>
}

export const planWindow = ({ from, to }: AnalyticsWindow): WindowPlan => {
  const firstDay = Math.ceil(from / DAY) * DAY
  const endDay = startOfDay(to)
  if (firstDay >= endDay) {
    // No whole day inside: the window lies within one day or straddles one midnight.
    const edges = from >= to ? [] : startOfDay(from) === startOfDay(to - 1) ? [{ from, to }] : [{ from, to: endDay }, { from: endDay, to }]
    return { firstDay, endDay: firstDay, edges: edges.filter((edge) => edge.from < edge.to) }
  }
  const edges = [
    { from, to: firstDay },
    { from: endDay, to }
  ].filter((edge) => edge.from < edge.to)
  return { firstDay, endDay, edges }
}

/** Every UTC day the window touches, as the Unix second of its midnight, ascending. */
export const daysOf = ({ from, to }: AnalyticsWindow): ReadonlyArray<number> => {
  const days: Array<number> = []
  if (from >= to) return days
  for (let day = startOfDay(from); day < to; day += DAY) days.push(day)
  return days
}

export const isoDate = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10)

const monthStart = (seconds: number, offset = 0) => {
  const date = new Date(seconds * 1000)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + offset, 1) / 1000
}

/**
 * The whole days `[firstDay, endDay)` of a plan split into whole UTC months `[firstMonth, endMonth)`
 * (empty when `firstMonth = endMonth`) and the days before and after them.
 */
export const monthsOf = (plan: WindowPlan) => {
  const firstMonth = plan.firstDay === monthStart(plan.firstDay) ? plan.firstDay : monthStart(plan.firstDay, 1)
  const endMonth = monthStart(plan.endDay)
  if (firstMonth >= endMonth) return { firstMonth: 0, endMonth: 0, days: [{ from: plan.firstDay, to: plan.endDay }] }
  const days = [
    { from: plan.firstDay, to: firstMonth },
    { from: endMonth, to: plan.endDay }
  ].filter((range) => range.from < range.to)
  return { firstMonth, endMonth, days }
}
