import { Clock, Duration, Effect } from "effect"

const FREE_FAILURES = 3
const MAX_DELAY_MS = 8_000
const FORGET_AFTER_MS = 15 * 60_000
const MAX_TRACKED = 100_000

/**
 * Growing delays for repeated login failures on one e-mail (known or not): after 3 failures each
 * attempt waits 250 ms, then 500 ms, 1 s, ... up to 8 s, until a success or 15 quiet minutes.
 * Counted per instance; requests without an e-mail cannot match an account and are not counted.
 */
export class LoginThrottle extends Effect.Service<LoginThrottle>()("LoginThrottle", {
  sync: () => {
    const failures = new Map<string, { count: number; last: number }>()
    const keyOf = (email: string) => email.trim().toLowerCase().slice(0, 320)

    const delayFor = (email: string, now: number) => {
      const entry = failures.get(keyOf(email))
      if (entry === undefined || now - entry.last > FORGET_AFTER_MS || entry.count < FREE_FAILURES) return 0
      return Math.min(MAX_DELAY_MS, 250 * 2 ** (entry.count - FREE_FAILURES))
    }

    return {
      /** Waits as long as this e-mail's recent failures call for. */
      wait: (email: string) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const delay = delayFor(email, now)
          return delay === 0 ? Effect.void : Effect.sleep(Duration.millis(delay))
        }),
      failed: (email: string) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const key = keyOf(email)
          if (key === "") return
          const entry = failures.get(key)
          const count = entry === undefined || now - entry.last > FORGET_AFTER_MS ? 1 : entry.count + 1
          failures.delete(key)
          if (failures.size >= MAX_TRACKED) failures.delete(failures.keys().next().value!)
          failures.set(key, { count, last: now })
        }),
      succeeded: (email: string) => Effect.sync(() => void failures.delete(keyOf(email)))
    }
  }
}) {}
