/** Nearest-rank percentile (`q` from 0 to 1) of sorted values; NaN for none. */
export const percentile = (sorted: ArrayLike<number>, q: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
