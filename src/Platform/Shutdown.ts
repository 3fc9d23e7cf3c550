import { Context, Deferred, Exit, FiberId, Layer } from "effect"

/**
 * A copy of the same stop arriving this soon after it is the same stop: `npm start` signalled as a
 * process group (systemd's default, Ctrl-C in a terminal) delivers SIGTERM to node twice, once
 * directly and once relayed by npm, within milliseconds.
 */
export const RELAYED_SIGNAL_WINDOW_MS = 1_000

/**
 * The stop sequence of the process, moved on by signals (`main.ts`) and read by the listener and
 * `/readyz`. The first stop request starts the drain: `/readyz` answers 503 and connections opened
 * before it close after their next answer, while the listener still accepts so that a proxy can take
 * the instance out of its pool. A later request ends the drain at once. Nothing here decides when clicks are written: the
 * layers do that when they close, whatever the signals.
 */
export class ShutdownState {
  private requestedAt: number | undefined
  /** Completed by the first stop request. */
  readonly requested = Deferred.unsafeMake<void>(FiberId.none)
  /** Completed by a stop request after the first (not a relayed copy of it). */
  readonly hurried = Deferred.unsafeMake<void>(FiberId.none)
  /** Answers the listener has finished since the process started. */
  answered = 0

  get draining(): boolean {
    return this.requestedAt !== undefined
  }

  /** When the drain started (`Date.now()`), if it has. */
  get drainingSince(): number | undefined {
    return this.requestedAt
  }

  request(now: number = Date.now()): void {
    if (this.requestedAt === undefined) {
      this.requestedAt = now
      Deferred.unsafeDone(this.requested, Exit.void)
    } else if (now - this.requestedAt >= RELAYED_SIGNAL_WINDOW_MS) {
      Deferred.unsafeDone(this.hurried, Exit.void)
    }
  }
}

export class Shutdown extends Context.Tag("Shutdown")<Shutdown, ShutdownState>() {
  /** A stop sequence of its own, which nothing requests unless the caller does (tests, embedders). */
  static readonly layer = Layer.sync(Shutdown, () => new ShutdownState())
  static readonly layerOf = (state: ShutdownState) => Layer.succeed(Shutdown, state)
}
