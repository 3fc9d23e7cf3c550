/**
 * A token bucket of CPU time: work may use `cores` cores on average, with bursts of up to `burstMs` of
 * work beyond that. `delay` says how long to wait before starting; `spent` charges what the work took.
 */
export class CpuBudget {
  private credit: number
  private refilledAt: number

  constructor(
    private readonly cores: number,
    private readonly burstMs: number,
    now: number
  ) {
    this.credit = burstMs
    this.refilledAt = now
  }

  private refill(now: number) {
    this.credit = Math.min(this.burstMs, this.credit + (now - this.refilledAt) * this.cores)
    this.refilledAt = now
  }

  /** Milliseconds to wait until the budget is no longer overdrawn (0: start now). */
  delay(now: number): number {
    this.refill(now)
    return this.credit >= 0 ? 0 : Math.ceil(-this.credit / this.cores)
  }

  spent(ms: number, now: number) {
    this.refill(now)
    this.credit -= ms
  }
}
