/**
 * Resources (hashing threads) shared fairly between keys (client networks) and handed out at a pace:
 * when a resource is free and `pace` allows, it goes to the waiting key served least recently, so one
 * network with many requests waiting cannot make another wait behind all of them, and a key never
 * served before goes first. At most `perKey` requests of one key wait or run at once, and at most
 * `maxWaiting` wait in all; `admit` refuses the rest.
 */
export class FairQueue<R> {
  private readonly idle: Array<R>
  /** Waiting callbacks by key, in arrival order. */
  private readonly waiting = new Map<string, Array<(resource: R) => void>>()
  private readonly holding = new Map<string, number>()
  private readonly lastServed = new Map<string, number>()
  private served = 0
  private waitingCount = 0
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    resources: ReadonlyArray<R>,
    private readonly perKey: number,
    private readonly maxWaiting: number,
    /** Milliseconds to wait before the next resource may be handed out (0: now). */
    private readonly pace: () => number = () => 0
  ) {
    this.idle = [...resources]
  }

  /** Counts a request of `key` in, or answers false when its key or the whole queue is full. */
  admit(key: string): boolean {
    const held = this.holding.get(key) ?? 0
    if (held >= this.perKey || this.waitingCount >= this.maxWaiting) return false
    this.holding.set(key, held + 1)
    return true
  }

  /** Hands an admitted request a resource when its turn comes. */
  take(key: string, use: (resource: R) => void): void {
    const queue = this.waiting.get(key)
    if (queue === undefined) this.waiting.set(key, [use])
    else queue.push(use)
    this.waitingCount++
    this.pump()
  }

  /** Takes back the resource of a finished request of `key`. */
  give(key: string, resource: R): void {
    const held = (this.holding.get(key) ?? 1) - 1
    if (held === 0) this.holding.delete(key)
    else this.holding.set(key, held)
    this.idle.push(resource)
    this.pump()
  }

  private pump(): void {
    while (this.idle.length > 0 && this.waitingCount > 0) {
      if (this.timer !== undefined) return
      const wait = this.pace()
      if (wait > 0) {
        this.timer = setTimeout(() => {
          this.timer = undefined
          this.pump()
        }, wait)
        this.timer.unref()
        return
      }
      const key = this.nextKey()!
      const queue = this.waiting.get(key)!
      const use = queue.shift()!
      if (queue.length === 0) this.waiting.delete(key)
      this.waitingCount--
      this.lastServed.delete(key)
      this.lastServed.set(key, ++this.served)
      // Only the order of recently served keys matters; new keys go first anyway.
      if (this.lastServed.size > 10_000) this.lastServed.delete(this.lastServed.keys().next().value!)
      use(this.idle.pop()!)
    }
  }

  private nextKey(): string | undefined {
    let best: string | undefined
    let bestServed = Infinity
    for (const key of this.waiting.keys()) {
      const served = this.lastServed.get(key) ?? 0
      if (served < bestServed) {
        best = key
        bestServed = served
      }
    }
    return best
  }
}
