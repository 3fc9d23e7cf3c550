import { Effect } from "effect"
import type { Scope } from "effect"
import pg from "pg"
import { CHANGES_CHANNEL, DatabasePool } from "./Database.ts"

export interface ChangeListener {
  /** `l:<domain id>:<lower-cased alias>` or `d:<domain name>`. */
  readonly onChange: (payload: string) => void
  /** Announcements may have been missed (a listening connection was re-established): forget everything. */
  readonly onReset: () => void
}

/**
 * Link and domain changes, from any instance, as PostgreSQL announces them. Every pooled connection
 * listens too, so a change made through this process is seen before the statement that made it
 * returns; a dedicated connection hears other instances while the pool is idle.
 */
export class ChangeFeed extends Effect.Service<ChangeFeed>()("ChangeFeed", {
  scoped: Effect.gen(function* () {
    const { pool, shared, notificationListeners } = yield* DatabasePool
    const listeners = new Set<ChangeListener>()
    const onNotification = (message: pg.Notification) => {
      if (message.channel !== CHANGES_CHANNEL || message.payload === undefined) return
      for (const listener of listeners) listener.onChange(message.payload)
    }
    const reset = () => {
      for (const listener of listeners) listener.onReset()
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => notificationListeners.add(onNotification)),
      () => Effect.sync(() => notificationListeners.delete(onNotification))
    )
    if (shared) yield* dedicatedListener(pool.options, onNotification, reset)
    return {
      subscribe: (listener: ChangeListener): Effect.Effect<void, never, Scope.Scope> =>
        Effect.acquireRelease(
          Effect.sync(() => void listeners.add(listener)),
          () => Effect.sync(() => void listeners.delete(listener))
        )
    }
  })
}) {}

const RETRY_MS = 500

/**
 * One connection that only listens, re-opened half a second after it is lost; each time it (re)opens,
 * listeners are reset, since announcements made meanwhile never reached this instance.
 */
const dedicatedListener = (
  options: pg.PoolOptions,
  onNotification: (message: pg.Notification) => void,
  reset: () => void
) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      let closed = false
      let client: pg.Client | undefined
      let timer: NodeJS.Timeout | undefined
      const retry = () => {
        if (closed) return
        timer = setTimeout(() => {
          timer = undefined
          open()
        }, RETRY_MS)
      }
      const open = () => {
        const current = new pg.Client({ ...options, application_name: "link-shortener-listener" })
        client = current
        // A lost connection is reported by "error", "end" or both: only the first one counts.
        const lost = () => {
          if (client !== current) return
          client = undefined
          current.end().catch(() => undefined)
          retry()
        }
        current.on("error", lost)
        current.on("end", lost)
        current.on("notification", onNotification)
        current
          .connect()
          .then(() => current.query(`LISTEN ${CHANGES_CHANNEL}`))
          .then(() => {
            if (!closed && client === current) reset()
          })
          .catch(lost)
      }
      open()
      return () => {
        closed = true
        if (timer !== undefined) clearTimeout(timer)
        const last = client
        client = undefined
        return last?.end().catch(() => undefined)
      }
    }),
    (close) => Effect.promise(async () => close()).pipe(Effect.timeoutOption(1000))
  )
