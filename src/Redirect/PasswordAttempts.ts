/** Password tries one client network may make in WINDOW_MS, on all links of this instance together. */
export const TRIES_PER_WINDOW = 5
export const WINDOW_MS = 60_000
const MAX_TRACKED = 100_000

/**
 * A sliding window of password tries per client network (`clientNetwork`): the sixth try within a
 * minute is refused before anything is hashed, and told when the oldest try leaves the window.
 */
export const passwordAttempts = (tries = TRIES_PER_WINDOW, windowMs = WINDOW_MS) => {
  const recent = new Map<string, Array<number>>()
  return {
    /** Counts a try from `network`; undefined when it may go on, else the seconds to wait. */
    attempt: (network: string, now: number): number | undefined => {
      const times = (recent.get(network) ?? []).filter((at) => now - at < windowMs)
      recent.delete(network)
      if (recent.size >= MAX_TRACKED) recent.delete(recent.keys().next().value!)
      if (times.length >= tries) {
        recent.set(network, times)
        return Math.max(1, Math.ceil((times[0]! + windowMs - now) / 1000))
      }
      times.push(now)
      recent.set(network, times)
      return undefined
    }
  }
}
