import { Effect } from "effect"

/**
 * At most `limit` effects at once per key, counted in this process. One more is refused at once
 * with the given failure, never queued; a key's entry is removed when its count is back to 0, so
 * the map holds only keys with something running.
 */
export const keyedGate = <K>(limit: number) => {
  const running = new Map<K, number>()
  const enter = <E>(key: K, refused: () => E) =>
    Effect.suspend(() => {
      const count = running.get(key) ?? 0
      if (count >= limit) return Effect.fail(refused())
      running.set(key, count + 1)
      return Effect.void
    })
  const leave = (key: K) =>
    Effect.sync(() => {
      const count = (running.get(key) ?? 1) - 1
      if (count <= 0) running.delete(key)
      else running.set(key, count)
    })
  return {
    run: <A, E, R, E2>(key: K, refused: () => E2, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | E2, R> =>
      Effect.acquireUseRelease(enter(key, refused), () => effect, () => leave(key)),
    /** How many keys have something running. */
    keys: () => running.size
  }
}
