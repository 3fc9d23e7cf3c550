import { Either } from "effect"
import { HOURLY_ROLLUP_DAYS } from "../Clicks/Rollups.ts"
import { WindowEndWithoutStart, WindowInvalid } from "./AnalyticsErrors.ts"
import { LAST_SECOND } from "./UnixSecond.ts"

export const DAY = 86_400

/** 10000-01-01T00:00:00Z: every window ends by then. */
const END_OF_TIME = LAST_SECOND + 1

/** A time range in Unix seconds, `to` exclusive. */
export interface TimeRange {
  readonly from: number
  readonly to: number
}

/** A report's time range and the instant it was asked. */
export interface AnalyticsWindow extends TimeRange {
  readonly now: number
}

export const startOfDay = (seconds: number) => Math.floor(seconds / DAY) * DAY

/** The same instant one calendar year later (29 February goes to 1 March). */
export const oneYearAfter = (seconds: number) => {
  const date = new Date(seconds * 1000)
  date.setUTCFullYear(date.getUTCFullYear() + 1)
  return Math.floor(date.getTime() / 1000)
}

/**
 * The window of a request: neither bound gives the start of the UTC day a week ago to the end of
 * today; `from` alone one year after it. `to` alone, `to` before `from` or more than a year after it,
 * and a lone `from` whose year passes the end of 9999 are refused.
 */
export const analyticsWindow = (
  now: number,
  from: number | undefined,
  to: number | undefined
): Either.Either<AnalyticsWindow, WindowInvalid | WindowEndWithoutStart> => {
  if (from === undefined && to === undefined) {
    const today = startOfDay(now)
    return Either.right({ from: today - 7 * DAY, to: today + DAY, now })
  }
  if (from === undefined) return Either.left(WindowEndWithoutStart.of())
  if (to === undefined) {
    const end = oneYearAfter(from)
    return end > END_OF_TIME ? Either.left(WindowInvalid.of()) : Either.right({ from, to: end, now })
  }
  if (to < from || to > oneYearAfter(from)) return Either.left(WindowInvalid.of())
  return Either.right({ from, to, now })
}

/** Clicks of a range added to what the rest of a plan counts (`sign` 1) or taken from it (-1). */
export interface Edge extends TimeRange {
  readonly sign: 1 | -1
}

export const HOUR = 3600

/**
 * How a window is counted: whole UTC days `[firstDay, endDay)` from the daily rollups, whole UTC
 * hours of `hours` from the hourly ones, and the clicks of `edges`, each with its sign.
 */
export interface WindowPlan {
  readonly firstDay: number
  readonly endDay: number
  readonly hours: ReadonlyArray<Edge>
  readonly edges: ReadonlyArray<Edge>
}

/** Whole units `[first, end)` of a range, corrected by the ranges of `edges`. */
interface UnitPlan {
  readonly first: number
  readonly end: number
  readonly edges: ReadonlyArray<Edge>
}

/** How many clicks a range holds, where known (capped: a large count stands for "many"). */
export type ClicksIn = (range: TimeRange) => number | undefined

/**
 * A range in whole `unit`s (a day or an hour, aligned to Unix time): a partial unit at an edge is
 * counted from its part inside the range, or as the whole unit minus its part outside, whichever
 * holds fewer clicks where `clicksIn` knows both, else whichever spans less time. Nothing exists
 * after `now`, so a unit cut at `now` is the whole unit minus next to nothing.
 */
const planUnits = ({ from, to, now }: AnalyticsWindow, unit: number, clicksIn: ClicksIn = () => undefined): UnitPlan => {
  if (from >= to) return { first: from, end: from, edges: [] }
  const span = (edges: ReadonlyArray<Edge>) => edges.reduce((sum, edge) => sum + Math.max(0, Math.min(edge.to, now) - edge.from), 0)
  const clicks = (edges: ReadonlyArray<Edge>) => edges.reduce((sum, edge) => sum + (clicksIn(edge) ?? 0), 0)
  /** The side to read: fewer clicks, then less time; time alone unless every range's count is known. */
  const cheaper = (outside: ReadonlyArray<Edge>, inside: ReadonlyArray<Edge>) => {
    const counted = [...outside, ...inside].every((edge) => clicksIn(edge) !== undefined)
    const byClicks = counted ? clicks(outside) - clicks(inside) : 0
    return byClicks < 0 || (byClicks === 0 && span(outside) < span(inside)) ? outside : inside
  }
  const first = Math.floor(from / unit) * unit
  const last = Math.floor((to - 1) / unit) * unit
  const added = (range: TimeRange): Array<Edge> => (range.from < range.to ? [{ ...range, sign: 1 }] : [])
  const removed = (range: TimeRange): Array<Edge> => (range.from < range.to ? [{ ...range, sign: -1 }] : [])
  if (first === last) {
    const inside = added({ from, to })
    const outside = [...removed({ from: first, to: from }), ...removed({ from: to, to: first + unit })]
    return outside.length === 0 || cheaper(outside, inside) === outside
      ? { first, end: first + unit, edges: outside }
      : { first, end: first, edges: inside }
  }
  const headIn = added({ from, to: first + unit })
  const headOut = removed({ from: first, to: from })
  const tailIn = added({ from: last, to })
  const tailOut = removed({ from: to, to: last + unit })
  const head = headOut.length === 0 ? [] : cheaper(headOut, headIn)
  const tail = tailOut.length === 0 ? [] : cheaper(tailOut, tailIn)
  return {
    first: head === headIn ? first + unit : first,
    end: tail === tailIn ? last : last + unit,
    edges: [...head, ...tail]
  }
}

/**
 * A window in whole days; the partial days at its edges in whole hours (added to the days or taken
 * from them, as the day plan says) where the hourly rollups still hold them, `hourlyDays` whole days
 * before today and today; the partial hours at their edges from the clicks. A recent edge day then
 * costs the clicks of at most two part-hours, however many clicks it holds; an older one its clicks
 * inside or outside the window, whichever range is shorter.
 */
export const planWindow = (window: AnalyticsWindow, hourlyDays = HOURLY_ROLLUP_DAYS, clicksIn?: ClicksIn): WindowPlan => {
  const days = planUnits(window, DAY)
  const hourlyFrom = startOfDay(window.now) - hourlyDays * DAY
  const hours: Array<Edge> = []
  const edges: Array<Edge> = []
  for (const edge of days.edges) {
    if (edge.from < hourlyFrom) {
      edges.push(edge)
      continue
    }
    const inHours = planUnits({ from: edge.from, to: edge.to, now: window.now }, HOUR, clicksIn)
    if (inHours.first < inHours.end) hours.push({ from: inHours.first, to: inHours.end, sign: edge.sign })
    for (const part of inHours.edges) edges.push({ from: part.from, to: part.to, sign: part.sign === edge.sign ? 1 : -1 })
  }
  return { firstDay: days.first, endDay: days.end, hours, edges }
}

/**
 * The parts of the hours holding the window's bounds, on either side of each bound: the ranges whose
 * clicks `planWindow` may read from the clicks themselves when the hours are recent, and so the ones
 * worth counting first.
 */
export const boundaryPieces = ({ from, to }: TimeRange): ReadonlyArray<TimeRange> => {
  if (from >= to) return []
  const pieces = new Map<string, TimeRange>()
  const add = (range: TimeRange) => {
    if (range.from < range.to) pieces.set(`${range.from}-${range.to}`, range)
  }
  const fromHour = Math.floor(from / HOUR) * HOUR
  const toHour = Math.floor(to / HOUR) * HOUR
  if (fromHour < from) {
    add({ from: fromHour, to: from })
    add({ from, to: Math.min(to, fromHour + HOUR) })
  }
  if (toHour < to) {
    add({ from: Math.max(from, toHour), to })
    add({ from: to, to: toHour + HOUR })
  }
  return [...pieces.values()]
}

/** Every UTC day the window touches, as the Unix second of its midnight, ascending. */
export const daysOf = ({ from, to }: TimeRange): ReadonlyArray<number> => {
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
