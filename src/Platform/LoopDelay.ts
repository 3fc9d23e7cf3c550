import { monitorEventLoopDelay } from "node:perf_hooks"

/** Event-loop delay of one window, in seconds. */
export interface LoopDelay {
  readonly p50: number
  readonly p99: number
  readonly max: number
}

const NS = 1e-9

/**
 * The event-loop delay of the calling thread, sampled every 10 ms by Node's own timer (outside
 * JavaScript); `take` answers the window since the previous call and starts a new one.
 */
export const watchLoopDelay = () => {
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  return {
    take: (): LoopDelay => {
      const window =
        histogram.count === 0
          ? { p50: 0, p99: 0, max: 0 }
          : { p50: histogram.percentile(50) * NS, p99: histogram.percentile(99) * NS, max: histogram.max * NS }
      histogram.reset()
      return window
    },
    stop: () => histogram.disable()
  }
}
