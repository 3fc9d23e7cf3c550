import { Clock, Effect } from "effect"
import { ChangeFeed } from "./ChangeFeed.ts"

export interface AnnouncedCacheOptions<V> {
  /** Entries kept; past this the oldest goes. */
  readonly size: number
  /** How long an entry is trusted without a word from the database, as a backstop. */
  readonly seconds: number
  /** The change announcements that empty the cache. */
  readonly forgetOn: (payload: string) => boolean
  /** Whether a cached value still holds at `now` (Unix seconds), beside its age. */
  readonly holds?: (value: V, now: number) => boolean
}

/**
 * Values read from the database, kept in memory until a change announcement (`ChangeFeed`) that
 * `forgetOn` accepts empties the cache: this instance hears its own changes before the changing
 * statement returns, other instances' within milliseconds. A value read while an announcement
 * arrived is not kept, since it may predate the change.
 */
export const announcedCache = <V>(options: AnnouncedCacheOptions<V>) =>
  Effect.gen(function* () {
    const entries = new Map<string, { readonly value: V; readonly cachedAt: number }>()
    let generation = 0
    const forget = () => {
      generation++
      entries.clear()
    }
    yield* (yield* ChangeFeed).subscribe({
      onChange: (payload) => {
        if (options.forgetOn(payload)) forget()
      },
      onReset: forget
    })
    /** The value cached under `key`, else `read`'s (kept for next time). */
    const through = <E, R>(key: string, read: Effect.Effect<V, E, R>) =>
      Effect.gen(function* () {
        const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const cached = entries.get(key)
        if (cached !== undefined && cached.cachedAt + options.seconds > now && (options.holds?.(cached.value, now) ?? true)) {
          return cached.value
        }
        const started = generation
        const value = yield* read
        if (started === generation) {
          entries.delete(key)
          if (entries.size >= options.size) entries.delete(entries.keys().next().value ?? key)
          entries.set(key, { value, cachedAt: now })
        }
        return value
      })
    return { through }
  })
