/**
 * A Prometheus histogram without labels for a hot path: one observation is a scan of at most a
 * dozen bounds and two additions into arrays made once, with no Effect and no allocation.
 */
export class FixedHistogram {
  private readonly counts: Float64Array
  private sum = 0
  private count = 0

  constructor(readonly bounds: ReadonlyArray<number>) {
    this.counts = new Float64Array(bounds.length)
  }

  observe(value: number): void {
    const bounds = this.bounds
    let i = 0
    while (i < bounds.length && value > bounds[i]!) i++
    if (i < bounds.length) this.counts[i]!++
    this.sum += value
    this.count++
  }

  /** The exposition lines of this histogram under `name`, with `labels` (`kind="major"`) on each. */
  samples(name: string, labels = ""): Array<string> {
    const prefix = labels === "" ? "" : `${labels},`
    const tail = labels === "" ? "" : `{${labels}}`
    const lines: Array<string> = []
    let cumulative = 0
    this.bounds.forEach((bound, i) => {
      cumulative += this.counts[i]!
      lines.push(`${name}_bucket{${prefix}le="${bound}"} ${cumulative}`)
    })
    lines.push(`${name}_bucket{${prefix}le="+Inf"} ${this.count}`, `${name}_sum${tail} ${this.sum}`, `${name}_count${tail} ${this.count}`)
    return lines
  }
}
