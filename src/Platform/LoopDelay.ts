import { monitorEventLoopDelay } from "node:perf_hooks"

/** Event-loop delay of one window, in seconds. */
export interface LoopDelay {
  readonly p50: number
  readonly p99: number
  readonly max: number
}

const RESOLUTION_MS = 10

/** Seconds a sample (nanoseconds) came later than due: Node records the whole interval of its timer. */
const lateBy = (nanoseconds: number) => Math.max(0, nanoseconds / 1e6 - RESOLUTION_MS) / 1000

/**
 * The event-loop delay of the calling thread, sampled every 10 ms by Node's own timer (outside
 * JavaScript); `take` answers the window since the previous call and starts a new one.
 */
export const watchLoopDelay = () => {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  histogram.enable()
  return {
    take: (): LoopDelay => {
      const window =
        histogram.count === 0
          ? { p50: 0, p99: 0, max: 0 }
          : { p50: lateBy(histogram.percentile(50)), p99: lateBy(histogram.percentile(99)), max: lateBy(histogram.max) }
      histogram.reset()
      return window
    },
    stop: () => histogram.disable()
  }
}
