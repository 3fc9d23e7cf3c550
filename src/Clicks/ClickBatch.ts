import type { ClickRow } from "./ClickRepo.ts"
import { type RollupCode, type RollupKind, rollupCode } from "./Rollups.ts"

/** Non-bot clicks of one link in a batch, and the latest of them (ISO 8601). */
export interface LinkTotal {
  readonly link_id: number
  readonly clicks: number
  readonly last: string
}

/**
 * One rollup row summed over a batch, per UTC hour: the same kinds and keys as the SQL `facts`. The
 * daily rollups sum these rows by day.
 */
export interface RollupRow {
  readonly link_id: number
  readonly domain_id: number
  /** As stored: the rows go to the database as they are. */
  readonly kind: RollupCode
  /** The UTC hour's first instant, YYYY-MM-DDTHH:00:00Z. */
  readonly hour: string
  readonly value: string
  readonly region: string
  readonly city: string
  readonly clicks: number
  readonly scans: number
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

/** Rows of one INSERT statement: its parameters stay around 1 MB. */
const STATEMENT_ROWS = 5000

/**
 * The clicks of one INSERT statement as columns, for the embedded database and replays (a server
 * takes a fresh batch's rows by one binary COPY): each column is one array parameter read back row
 * by row with `unnest`, which PostgreSQL parses faster than JSON objects, no column name repeated per
 * click. The user agent is the text; the repository sends its dictionary id.
 */
export interface ClickColumns {
  readonly id: Array<string>
  readonly at: Array<string>
  readonly link_id: Array<number>
  readonly domain_id: Array<number>
  /** As bytea input: `\x` and the hex digits. */
  readonly ip_hash: Array<string>
  readonly country: Array<string | null>
  readonly region: Array<string | null>
  readonly city: Array<string | null>
  readonly device: Array<string>
  readonly referrer: Array<string>
  readonly user_agent: Array<string>
  readonly qr: Array<boolean>
  readonly bot: Array<boolean>
  readonly destination_id: Array<number | null>
}

const emptyColumns = (): ClickColumns => ({
  id: [],
  at: [],
  link_id: [],
  domain_id: [],
  ip_hash: [],
  country: [],
  region: [],
  city: [],
  device: [],
  referrer: [],
  user_agent: [],
  qr: [],
  bot: [],
  destination_id: []
})

/** Appends `rows` to `columns`. */
export const appendColumns = (columns: ClickColumns, rows: ReadonlyArray<ClickRow>): void => {
  for (const row of rows) {
    columns.id.push(row.id)
    columns.at.push(row.at)
    columns.link_id.push(row.link_id)
    columns.domain_id.push(row.domain_id)
    columns.ip_hash.push(`\\x${row.ip_hash}`)
    columns.country.push(row.country)
    columns.region.push(row.region)
    columns.city.push(row.city)
    columns.device.push(row.device)
    columns.referrer.push(row.referrer)
    columns.user_agent.push(row.user_agent)
    columns.qr.push(row.qr)
    columns.bot.push(row.bot)
    columns.destination_id.push(row.destination_id ?? null)
  }
}

/** `rows` as columns. */
export const toColumns = (rows: ReadonlyArray<ClickRow>): ClickColumns => {
  const columns = emptyColumns()
  appendColumns(columns, rows)
  return columns
}

/** Clicks and scans of one value. */
interface Tally {
  clicks: number
  scans: number
}

/** One link's non-bot clicks of one UTC hour, by value: what its rollup rows will hold. */
interface HourTally extends Tally {
  readonly places: Map<string, Tally>
  readonly devices: Map<string, Tally>
  readonly referrers: Map<string, Tally>
}

interface LinkTally {
  readonly link_id: number
  readonly domain_id: number
  clicks: number
  last: string
  /** By hour, YYYY-MM-DDTHH. */
  readonly hours: Map<string, HourTally>
  readonly visitors: Set<string>
}

const tally = (values: Map<string, Tally>, value: string, scan: number) => {
  const known = values.get(value)
  if (known === undefined) values.set(value, { clicks: 1, scans: scan })
  else {
    known.clicks += 1
    known.scans += scan
  }
}

/** Place values joined for one map key: PostgreSQL text cannot hold NUL, so no stored value has one. */
const PLACE_SEPARATOR = "\u0000"

/**
 * New clicks on their way to the database, prepared as they are added (in small slices, so the thread
 * that answers redirects is never held long): cut into INSERT statements of 5,000 (`columns`), their
 * distinct user agents gathered for the dictionary, and summed per
 * link, per rollup row and per visitor, bots left out, so that the database upserts one row per link
 * and value instead of one per click. `at` must be in the form of `Date.prototype.toISOString` (UTC),
 * as the click writer makes it: the hour is read off it.
 */
export class ClickBatch {
  readonly rows: Array<ClickRow> = []
  /** The distinct user agents of the clicks. */
  readonly userAgents = new Set<string>()
  /** Where each INSERT statement's rows end in `rows`. */
  private readonly ends: Array<number> = []
  private openRows = 0
  private readonly links = new Map<number, LinkTally>()
  /** The rows of each link, bots too, in the order added. */
  private readonly linkRows = new Map<number, Array<ClickRow>>()

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
      this.userAgents.add(row.user_agent)
      const ofLink = this.linkRows.get(row.link_id)
      if (ofLink === undefined) this.linkRows.set(row.link_id, [row])
      else ofLink.push(row)
      if (!row.bot) this.count(row)
    }
    this.openRows += rows.length
    if (this.openRows >= STATEMENT_ROWS) this.close()
  }

  /**
   * The rows by link id, each link's in the order added (about time order): written in this order,
   * consecutive entries of the clicks' primary key (link_id, at, id) land on the same index page,
   * which is then in the CPU's cache, instead of each on another page of the index.
   */
  *inLinkOrder(): Generator<ClickRow> {
    for (const linkId of [...this.linkRows.keys()].sort((a, b) => a - b)) yield* this.linkRows.get(linkId)!
  }

  /** The domains of the clicks. */
  domainIds(): ReadonlyArray<number> {
    const domains = new Set<number>()
    for (const row of this.rows) domains.add(row.domain_id)
    return [...domains]
  }

  /** The rows as columns, one `ClickColumns` per INSERT statement (made when asked: a server takes `rows` by COPY). */
  columns(): ReadonlyArray<ClickColumns> {
    this.close()
    return this.ends.map((end, n) => toColumns(this.rows.slice(this.ends[n - 1] ?? 0, end)))
  }

  /** The rows of each INSERT statement as a JSON array (for reading what a batch holds, as tests do). */
  json(): ReadonlyArray<string> {
    this.close()
    return this.ends.map((end, n) => JSON.stringify(this.rows.slice(this.ends[n - 1] ?? 0, end)))
  }

  summary(): BatchRollup {
    const links: Array<LinkTotal> = []
    const rollups: Array<RollupRow> = []
    const visitors: Array<Visitor> = []
    for (const link of this.links.values()) {
      const { link_id, domain_id } = link
      links.push({ link_id, clicks: link.clicks, last: link.last })
      for (const [key, counts] of link.hours) {
        const hour = `${key}:00:00Z`
        const row = (kind: RollupKind, value: string, region: string, city: string, { clicks, scans }: Tally) =>
          rollups.push({ link_id, domain_id, kind: rollupCode(kind), hour, value, region, city, clicks, scans })
        row("day", "", "", "", counts)
        row("hour", key.slice(11, 13), "", "", counts)
        for (const [place, counted] of counts.places) {
          const [country = "", region = "", city = ""] = place.split(PLACE_SEPARATOR)
          row("place", country, region, city, counted)
        }
        for (const [device, counted] of counts.devices) row("device", device, "", "", counted)
        for (const [referrer, counted] of counts.referrers) row("referrer", referrer, "", "", counted)
      }
      for (const ip_hash of link.visitors) visitors.push({ link_id, ip_hash })
    }
    return { links, rollups, visitors }
  }

  private close() {
    if (this.openRows === 0) return
    this.ends.push(this.rows.length)
    this.openRows = 0
  }

  private count(row: ClickRow) {
    let link = this.links.get(row.link_id)
    if (link === undefined) {
      link = { link_id: row.link_id, domain_id: row.domain_id, clicks: 0, last: row.at, hours: new Map(), visitors: new Set() }
      this.links.set(row.link_id, link)
    }
    link.clicks += 1
    if (row.at > link.last) link.last = row.at
    link.visitors.add(row.ip_hash)
    const hour = row.at.slice(0, 13)
    let counts = link.hours.get(hour)
    if (counts === undefined) {
      counts = { clicks: 0, scans: 0, places: new Map(), devices: new Map(), referrers: new Map() }
      link.hours.set(hour, counts)
    }
    const scan = row.qr ? 1 : 0
    counts.clicks += 1
    counts.scans += scan
    tally(counts.places, `${row.country ?? ""}${PLACE_SEPARATOR}${row.region ?? ""}${PLACE_SEPARATOR}${row.city ?? ""}`, scan)
    tally(counts.devices, row.device, scan)
    tally(counts.referrers, row.referrer, scan)
  }
}
