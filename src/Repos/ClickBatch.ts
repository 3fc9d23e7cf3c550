import type { ClickRow } from "./ClickRepo.ts"

/** Non-bot clicks of one link in a batch, and the latest of them (ISO 8601). */
export interface LinkTotal {
  readonly link_id: number
  clicks: number
  last: string
}

/** One row of `click_rollups` summed over a batch: the same kinds and values as the SQL `facts`. */
export interface RollupRow {
  readonly link_id: number
  readonly domain_id: number
  readonly kind: "d" | "g" | "v" | "r" | "h"
  /** UTC day, YYYY-MM-DD. */
  readonly day: string
  readonly a: string
  readonly b: string
  readonly c: string
  clicks: number
  scans: number
}

export interface Visitor {
  readonly link_id: number
  readonly ip_hash: string
}

export interface BatchRollup {
  readonly links: ReadonlyArray<LinkTotal>
  readonly rollups: ReadonlyArray<RollupRow>
  readonly visitors: ReadonlyArray<Visitor>
}

/** Rows of one INSERT statement: its JSON parameter stays around 1.5 MB. */
const STATEMENT_ROWS = 5000

/**
 * New clicks on their way to the database, prepared as they are added (in small slices, so the thread
 * that answers redirects is never held long): serialized to JSON per INSERT statement, and summed per
 * link, per rollup row and per visitor, bots left out, so that the database upserts one row per link
 * and value instead of one per click. `at` must be in the form of `Date.prototype.toISOString` (UTC),
 * as the click writer makes it: day and hour are read off it.
 */
export class ClickBatch {
  readonly rows: Array<ClickRow> = []
  private readonly statements: Array<string> = []
  private open: Array<string> = []
  private openRows = 0
  private readonly links = new Map<number, LinkTotal>()
  private readonly rollups = new Map<string, RollupRow>()
  private readonly visitors = new Map<string, Visitor>()

  static of(rows: ReadonlyArray<ClickRow>): ClickBatch {
    const batch = new ClickBatch()
    batch.add(rows)
    return batch
  }

  get size(): number {
    return this.rows.length
  }

  add(rows: ReadonlyArray<ClickRow>): void {
    if (rows.length === 0) return
    for (const row of rows) {
      this.rows.push(row)
      if (!row.bot) this.count(row)
    }
    this.open.push(JSON.stringify(rows).slice(1, -1))
    this.openRows += rows.length
    if (this.openRows >= STATEMENT_ROWS) this.close()
  }

  /** The rows as JSON arrays, one per INSERT statement. */
  json(): ReadonlyArray<string> {
    this.close()
    return this.statements
  }

  summary(): BatchRollup {
    return { links: [...this.links.values()], rollups: [...this.rollups.values()], visitors: [...this.visitors.values()] }
  }

  private close() {
    if (this.openRows === 0) return
    this.statements.push(`[${this.open.join(",")}]`)
    this.open = []
    this.openRows = 0
  }

  private count(row: ClickRow) {
    const total = this.links.get(row.link_id)
    if (total === undefined) this.links.set(row.link_id, { link_id: row.link_id, clicks: 1, last: row.at })
    else {
      total.clicks += 1
      if (row.at > total.last) total.last = row.at
    }
    const day = row.at.slice(0, 10)
    const scan = row.qr ? 1 : 0
    const add = (kind: RollupRow["kind"], a: string, b: string, c: string) => {
      const key = `${row.link_id}\u0000${kind}\u0000${day}\u0000${a}\u0000${b}\u0000${c}`
      const known = this.rollups.get(key)
      if (known === undefined) {
        this.rollups.set(key, { link_id: row.link_id, domain_id: row.domain_id, kind, day, a, b, c, clicks: 1, scans: scan })
      } else {
        known.clicks += 1
        known.scans += scan
      }
    }
    add("d", "", "", "")
    add("g", row.country ?? "", row.region ?? "", row.city ?? "")
    add("v", row.device, "", "")
    add("r", row.referrer, "", "")
    add("h", row.at.slice(11, 13), "", "")
    const visitor = `${row.link_id}\u0000${row.ip_hash}`
    if (!this.visitors.has(visitor)) this.visitors.set(visitor, { link_id: row.link_id, ip_hash: row.ip_hash })
  }
}
