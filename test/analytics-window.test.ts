import { describe, expect, it } from "@effect/vitest"
import { planWindow } from "../src/Analytics/AnalyticsWindow.ts"

const DAY = 86_400
const HOUR = 3600
/** 2025-03-10T00:00:00Z. */
const D = 1_741_564_800
const later = D + 400 * DAY

describe("planWindow: whole days from rollups, partial days corrected by the fewest clicks", () => {
  it("a window of whole days reads no click", () => {
    expect(planWindow({ from: D, to: D + 3 * DAY, now: later })).toEqual({ firstDay: D, endDay: D + 3 * DAY, edges: [] })
  })

  it("a start late in its day adds its clicks; an early one takes the day's first hours from the whole day", () => {
    expect(planWindow({ from: D + 20 * HOUR, to: D + 3 * DAY, now: later })).toEqual({
      firstDay: D + DAY,
      endDay: D + 3 * DAY,
      edges: [{ from: D + 20 * HOUR, to: D + DAY, sign: 1 }]
    })
    expect(planWindow({ from: D + 2 * HOUR, to: D + 3 * DAY, now: later })).toEqual({
      firstDay: D,
      endDay: D + 3 * DAY,
      edges: [{ from: D, to: D + 2 * HOUR, sign: -1 }]
    })
  })

  it("an end early in its day adds its clicks; a late one takes the day's last hours from the whole day", () => {
    expect(planWindow({ from: D, to: D + 2 * DAY + 3 * HOUR, now: later }).edges).toEqual([{ from: D + 2 * DAY, to: D + 2 * DAY + 3 * HOUR, sign: 1 }])
    expect(planWindow({ from: D, to: D + 2 * DAY + 21 * HOUR, now: later })).toEqual({
      firstDay: D,
      endDay: D + 3 * DAY,
      edges: [{ from: D + 2 * DAY + 21 * HOUR, to: D + 3 * DAY, sign: -1 }]
    })
  })

  it("a window ending now, even early in the day, takes the rest of today from the whole day", () => {
    const now = D + 5 * DAY + 2 * HOUR
    expect(planWindow({ from: now - 365 * DAY, to: now, now })).toEqual({
      firstDay: D + 5 * DAY - 365 * DAY,
      endDay: D + 6 * DAY,
      edges: [
        { from: D + 5 * DAY - 365 * DAY, to: now - 365 * DAY, sign: -1 },
        { from: now, to: D + 6 * DAY, sign: -1 }
      ]
    })
  })

  it("inside one day: its own clicks, or the whole day without the rest, whichever is fewer; ties read the clicks", () => {
    expect(planWindow({ from: D + HOUR, to: D + 3 * HOUR, now: later })).toEqual({
      firstDay: D,
      endDay: D,
      edges: [{ from: D + HOUR, to: D + 3 * HOUR, sign: 1 }]
    })
    expect(planWindow({ from: D + HOUR, to: D + 23 * HOUR, now: later })).toEqual({
      firstDay: D,
      endDay: D + DAY,
      edges: [
        { from: D, to: D + HOUR, sign: -1 },
        { from: D + 23 * HOUR, to: D + DAY, sign: -1 }
      ]
    })
    expect(planWindow({ from: D, to: D + 12 * HOUR, now: later }).edges).toEqual([{ from: D, to: D + 12 * HOUR, sign: 1 }])
  })

  it("an empty window reads nothing", () => {
    const plan = planWindow({ from: D + HOUR, to: D + HOUR, now: later })
    expect(plan.edges).toEqual([])
    expect(plan.firstDay).toBe(plan.endDay)
  })
})
