import type { ClickRow } from "./ClickRepo.ts"

/** Rows of `domain_click_days` (sql/0024) as columns: one per domain, UTC day and link. */
export interface DomainDayColumns {
  readonly domain_id: Array<number>
  readonly day: Array<string>
  readonly link_id: Array<number>
}

/** Entries this process remembers (all forgotten at once when full). */
const KNOWN_ENTRIES = 100_000

/** The UTC day (YYYY-MM-DD) of an ISO 8601 time; the writer's own are UTC already. */
const utcDay = (at: string) => (at.length === 24 && at.endsWith("Z") ? at.slice(0, 10) : new Date(at).toISOString().slice(0, 10))

/**
 * The `domain_click_days` rows a click writer has entered, so that a link is entered once a day, not
 * once a batch. Only rows whose statement committed are remembered (`remember` after it succeeds).
 */
export class DomainClickDays {
  private readonly known = new Set<string>()

  /** The rows of `rows`' clicks not remembered yet, in key order (the inserts of two writers cannot deadlock). */
  missing(rows: Iterable<ClickRow>): DomainDayColumns {
    const keys = new Map<string, { domain: number; day: string; link: number }>()
    let lastDomain = -1
    let lastLink = -1
    let lastDay = ""
    for (const row of rows) {
      const day = utcDay(row.at)
      // A batch holds each link's clicks together.
      if (row.link_id === lastLink && row.domain_id === lastDomain && day === lastDay) continue
      lastDomain = row.domain_id
      lastLink = row.link_id
      lastDay = day
      const key = `${row.domain_id}:${day}:${row.link_id}`
      if (!this.known.has(key) && !keys.has(key)) keys.set(key, { domain: row.domain_id, day, link: row.link_id })
    }
    const sorted = [...keys.values()].sort((a, b) => a.domain - b.domain || (a.day < b.day ? -1 : a.day > b.day ? 1 : a.link - b.link))
    return { domain_id: sorted.map((key) => key.domain), day: sorted.map((key) => key.day), link_id: sorted.map((key) => key.link) }
  }

  remember(entered: DomainDayColumns): void {
    if (this.known.size + entered.day.length > KNOWN_ENTRIES) this.known.clear()
    for (const [n, day] of entered.day.entries()) this.known.add(`${entered.domain_id[n]}:${day}:${entered.link_id[n]}`)
  }
}
