import { describe, expect, it } from "@effect/vitest"
import { boundaryPieces, planWindow, type TimeRange } from "../src/Analytics/AnalyticsWindow.ts"

const DAY = 86_400
const HOUR = 3600
const MINUTE = 60
/** 2025-03-10T00:00:00Z. */
const D = 1_741_564_800
/** A "now" after every window below, close enough that hourly rollups hold all their days. */
const later = D + 4 * DAY

describe("planWindow: whole days from rollups, partial days corrected by the fewest clicks", () => {
  it("a window of whole days reads no click", () => {
    expect(planWindow({ from: D, to: D + 3 * DAY, now: later })).toEqual({ firstDay: D, endDay: D + 3 * DAY, hours: [], edges: [] })
  })

  it("a start late in its day adds its hours; an early one takes the day's first hours from the whole day", () => {
    expect(planWindow({ from: D + 20 * HOUR, to: D + 3 * DAY, now: later })).toEqual({
      firstDay: D + DAY,
      endDay: D + 3 * DAY,
      hours: [{ from: D + 20 * HOUR, to: D + DAY, sign: 1 }],
      edges: []
    })
    expect(planWindow({ from: D + 2 * HOUR, to: D + 3 * DAY, now: later })).toEqual({
      firstDay: D,
      endDay: D + 3 * DAY,
      hours: [{ from: D, to: D + 2 * HOUR, sign: -1 }],
      edges: []
    })
  })

  it("an end early in its day adds its hours; a late one takes the day's last hours from the whole day", () => {
    expect(planWindow({ from: D, to: D + 2 * DAY + 3 * HOUR, now: later }).hours).toEqual([
      { from: D + 2 * DAY, to: D + 2 * DAY + 3 * HOUR, sign: 1 }
    ])
    expect(planWindow({ from: D, to: D + 2 * DAY + 21 * HOUR, now: later })).toEqual({
      firstDay: D,
      endDay: D + 3 * DAY,
      hours: [{ from: D + 2 * DAY + 21 * HOUR, to: D + 3 * DAY, sign: -1 }],
      edges: []
    })
  })

  it("a window ending now, even early in the day, takes the rest of today from the whole day", () => {
    const now = D + 5 * DAY + 2 * HOUR
    expect(planWindow({ from: now - 365 * DAY, to: now, now })).toEqual({
      firstDay: D + 5 * DAY - 365 * DAY,
      endDay: D + 6 * DAY,
      hours: [{ from: now, to: D + 6 * DAY, sign: -1 }],
      // A year ago is older than the hourly rollups: that partial day is read click by click.
      edges: [{ from: D + 5 * DAY - 365 * DAY, to: now - 365 * DAY, sign: -1 }]
    })
  })

  it("edge days older than the hourly rollups' days are read from their clicks, recent ones by the hour", () => {
    const window = { from: D + 20 * HOUR + 10 * MINUTE, to: D + 3 * DAY + 2 * HOUR + 30 * MINUTE }
    expect(planWindow({ ...window, now: D + 9 * DAY }, 7)).toEqual({
      firstDay: D + DAY,
      endDay: D + 3 * DAY,
      hours: [{ from: D + 3 * DAY, to: D + 3 * DAY + 2 * HOUR, sign: 1 }],
      edges: [
        { from: D + 20 * HOUR + 10 * MINUTE, to: D + DAY, sign: 1 },
        { from: D + 3 * DAY + 2 * HOUR, to: D + 3 * DAY + 2 * HOUR + 30 * MINUTE, sign: 1 }
      ]
    })
    expect(planWindow({ ...window, now: D + 20 * DAY }, 7).hours).toEqual([])
  })

  it("inside one day: its own hours, or the whole day without the rest, whichever is fewer", () => {
    expect(planWindow({ from: D + HOUR, to: D + 3 * HOUR, now: later })).toEqual({
      firstDay: D,
      endDay: D,
      hours: [{ from: D + HOUR, to: D + 3 * HOUR, sign: 1 }],
      edges: []
    })
    expect(planWindow({ from: D + HOUR, to: D + 23 * HOUR, now: later })).toEqual({
      firstDay: D,
      endDay: D + DAY,
      hours: [
        { from: D, to: D + HOUR, sign: -1 },
        { from: D + 23 * HOUR, to: D + DAY, sign: -1 }
      ],
      edges: []
    })
    expect(planWindow({ from: D, to: D + 12 * HOUR, now: later }).hours).toEqual([{ from: D, to: D + 12 * HOUR, sign: 1 }])
  })

  it("partial hours read their clicks, or the whole hour without the rest, whichever spans less; signs compose", () => {
    // Added day part [20:10, 24:00): hours 20-23, minus the clicks of 20:00-20:10.
    expect(planWindow({ from: D + 20 * HOUR + 10 * MINUTE, to: D + 3 * DAY, now: later })).toEqual({
      firstDay: D + DAY,
      endDay: D + 3 * DAY,
      hours: [{ from: D + 20 * HOUR, to: D + DAY, sign: 1 }],
      edges: [{ from: D + 20 * HOUR, to: D + 20 * HOUR + 10 * MINUTE, sign: -1 }]
    })
    // Added day part [20:50, 24:00): hours 21-23, plus the clicks of 20:50-21:00.
    expect(planWindow({ from: D + 20 * HOUR + 50 * MINUTE, to: D + 3 * DAY, now: later })).toMatchObject({
      hours: [{ from: D + 21 * HOUR, to: D + DAY, sign: 1 }],
      edges: [{ from: D + 20 * HOUR + 50 * MINUTE, to: D + 21 * HOUR, sign: 1 }]
    })
    // Removed day part [00:00, 02:10): the whole day minus hours 0-1 minus the clicks of 02:00-02:10.
    expect(planWindow({ from: D + 2 * HOUR + 10 * MINUTE, to: D + 3 * DAY, now: later })).toEqual({
      firstDay: D,
      endDay: D + 3 * DAY,
      hours: [{ from: D, to: D + 2 * HOUR, sign: -1 }],
      edges: [{ from: D + 2 * HOUR, to: D + 2 * HOUR + 10 * MINUTE, sign: -1 }]
    })
    // Removed day part [21:50, 24:00) (the window ends at 21:50): the whole day minus hours 22-23
    // minus the clicks of 21:50-22:00.
    expect(planWindow({ from: D - DAY, to: D + 21 * HOUR + 50 * MINUTE, now: later })).toMatchObject({
      endDay: D + DAY,
      hours: [{ from: D + 22 * HOUR, to: D + DAY, sign: -1 }],
      edges: [{ from: D + 21 * HOUR + 50 * MINUTE, to: D + 22 * HOUR, sign: -1 }]
    })
    // Removed day part [21:10, 24:00): the whole day minus hours 21-23 plus the clicks of 21:00-21:10.
    expect(planWindow({ from: D - DAY, to: D + 21 * HOUR + 10 * MINUTE, now: later })).toMatchObject({
      endDay: D + DAY,
      hours: [{ from: D + 21 * HOUR, to: D + DAY, sign: -1 }],
      edges: [{ from: D + 21 * HOUR, to: D + 21 * HOUR + 10 * MINUTE, sign: 1 }]
    })
  })

  it("a window inside today ending now reads today's hours and next to nothing of the clicks", () => {
    const now = D + 5 * HOUR + 20 * MINUTE
    expect(planWindow({ from: D + 3 * HOUR, to: now, now })).toEqual({
      firstDay: D,
      endDay: D,
      hours: [{ from: D + 3 * HOUR, to: D + 6 * HOUR, sign: 1 }],
      edges: [{ from: now, to: D + 6 * HOUR, sign: -1 }]
    })
  })

  it("with the part-hours' clicks counted, the side with fewer clicks is read, whatever its span", () => {
    // A burst of clicks in the window's first minutes, 20:05-20:10: the 50 minutes after 20:10 are
    // read by time alone; counted, the 10 empty minutes before 20:10 are taken from the whole hour.
    const now = D + 20 * HOUR + 12 * MINUTE
    const window = { from: D + 20 * HOUR + 10 * MINUTE, to: now + 1, now }
    expect(planWindow(window, 7).edges).toEqual([{ from: window.from, to: window.to, sign: 1 }])
    const clicks = new Map([[`${D + 20 * HOUR}-${window.from}`, 0], [`${window.from}-${window.to}`, 5000], [`${window.to}-${D + 21 * HOUR}`, 0]])
    const clicksIn = (range: TimeRange) => clicks.get(`${range.from}-${range.to}`)
    expect(planWindow(window, 7, clicksIn)).toEqual({
      firstDay: D,
      endDay: D,
      hours: [{ from: D + 20 * HOUR, to: D + 21 * HOUR, sign: 1 }],
      edges: [
        { from: D + 20 * HOUR, to: window.from, sign: -1 },
        { from: window.to, to: D + 21 * HOUR, sign: -1 }
      ]
    })
    // A count missing for one side: time decides, as without counts.
    const partly = (range: TimeRange) => (range.from === window.from ? 5000 : undefined)
    expect(planWindow(window, 7, partly).edges).toEqual([{ from: window.from, to: window.to, sign: 1 }])
  })

  it("the pieces worth counting are the parts of the bounds' hours on either side of each bound", () => {
    expect(boundaryPieces({ from: D + 20 * HOUR + 10 * MINUTE, to: D + 20 * HOUR + 40 * MINUTE })).toEqual([
      { from: D + 20 * HOUR, to: D + 20 * HOUR + 10 * MINUTE },
      { from: D + 20 * HOUR + 10 * MINUTE, to: D + 20 * HOUR + 40 * MINUTE },
      { from: D + 20 * HOUR + 40 * MINUTE, to: D + 21 * HOUR }
    ])
    expect(boundaryPieces({ from: D + HOUR, to: D + 3 * HOUR })).toEqual([])
    expect(boundaryPieces({ from: D + HOUR + MINUTE, to: D + 3 * HOUR })).toEqual([
      { from: D + HOUR, to: D + HOUR + MINUTE },
      { from: D + HOUR + MINUTE, to: D + 2 * HOUR }
    ])
  })

  it("an empty window reads nothing", () => {
    const plan = planWindow({ from: D + HOUR, to: D + HOUR, now: later })
    expect(plan.edges).toEqual([])
    expect(plan.hours).toEqual([])
    expect(plan.firstDay).toBe(plan.endDay)
  })
})
