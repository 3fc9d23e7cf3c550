/**
 * The vocabulary of the click rollups (tables of `sql/0005_analytics.sql`, key columns named by
 * `sql/0008_rollup_columns.sql`): what a rollup row counts clicks by, which columns hold the values it
 * counts by, and how each kind is stored. The click writer (batch sums and upserts) and the analytics
 * reports speak of kinds by name; this module alone knows the codes in the `kind` column.
 */

/**
 * What a row counts non-bot clicks by within its day: nothing more (`day`), the place (country,
 * region, city), the device class, the referrer host, or the UTC hour of the day.
 */
export type RollupKind = "day" | "place" | "device" | "referrer" | "hour"

// One byte per row ("char") in tables of millions of rows; the codes were stored before the names.
const CODES = { day: "d", place: "g", device: "v", referrer: "r", hour: "h" } as const satisfies Record<RollupKind, string>

/** A kind as the `kind` column stores it. */
export type RollupCode = (typeof CODES)[RollupKind]

export const rollupCode = (kind: RollupKind): RollupCode => CODES[kind]

const ALL_KINDS: ReadonlyArray<RollupKind> = ["day", "place", "device", "referrer", "hour"]

/** Per domain and owner there are no hour rows. */
export const OWNER_KINDS: ReadonlyArray<RollupKind> = ["day", "place", "device", "referrer"]

/** Per domain, owner and month, no day rows either: per-link monthly totals hold those. */
export const OWNER_MONTH_KINDS: ReadonlyArray<RollupKind> = ["place", "device", "referrer"]

/**
 * Per UTC hour, per link and per domain and owner (`click_rollups_hour`, `click_rollups_user_hour`),
 * no hour rows: an hour's day rows are its hour-of-day counts.
 */
export const HOURLY_KINDS: ReadonlyArray<RollupKind> = ["day", "place", "device", "referrer"]

/**
 * How many whole UTC days before today the hourly rollups serve (today too); they are kept a day
 * longer, then pruned. An hour's rows are worth keeping only while few report windows would read
 * the hour click by click: up to four rows per click where traffic is sparse, far fewer where it is
 * dense, which is where they matter.
 */
export const HOURLY_ROLLUP_DAYS = 7

/** The kind of the hourly rows a report of `kind` reads. */
export const hourlyCode = (kind: RollupKind): RollupCode => CODES[kind === "hour" ? "day" : kind]

/**
 * SQL select list: the key columns of one kind for the hourly rollup row `row`; the hour of day of an
 * hour kind read off the row's hour.
 */
export const hourlyKeyColumns = (kind: RollupKind, row: string) =>
  kind === "hour"
    ? `to_char(${row}.hour AT TIME ZONE 'UTC', 'HH24') AS value, ${row}.region, ${row}.city`
    : KEY_COLUMNS.map((column) => `${row}.${column}`).join(", ")

/**
 * The key columns after the kind, '' where a kind has nothing to put: `value` is the country of a
 * place, the device class, the referrer host ('direct' without one) or the hour '00'-'23' ('' in day
 * rows); `region` and `city` are those of a place. Unknown geography is ''.
 */
export const KEY_COLUMNS = ["value", "region", "city"] as const

/** SQL: the `kind` column of the row `alias` is `kind`. */
export const kindIs = (kind: RollupKind, alias: string) => `${alias}.kind = '${CODES[kind]}'`

/** SQL: the `kind` column of the row `alias` is one of `kinds`. */
export const kindIn = (kinds: ReadonlyArray<RollupKind>, alias: string) =>
  `${alias}.kind IN (${kinds.map((kind) => `'${CODES[kind]}'`).join(", ")})`

/** A kind's key of one row `click` of `clicks`, as SQL expressions in the order of KEY_COLUMNS. */
const clickKey = (kind: RollupKind, click: string): readonly [string, string, string] => {
  switch (kind) {
    case "day":
      return ["''", "''", "''"]
    case "place":
      return [`coalesce(${click}.country, '')`, `coalesce(${click}.region, '')`, `coalesce(${click}.city, '')`]
    case "device":
      return [`${click}.device`, "''", "''"]
    case "referrer":
      return [`${click}.referrer`, "''", "''"]
    case "hour":
      return [`to_char(${click}.at AT TIME ZONE 'UTC', 'HH24')`, "''", "''"]
  }
}

/** SQL select list: the key columns (`value, region, city`) of one kind for the clicks row `click`. */
export const clickKeyColumns = (kind: RollupKind, click: string) =>
  clickKey(kind, click)
    .map((expression, index) => `${expression} AS ${KEY_COLUMNS[index]}`)
    .join(", ")

/**
 * SQL `VALUES` rows `(kind, value, region, city)` of the clicks row `click`, one per kind: joined
 * laterally to clicks, they give every rollup row each click counts in.
 */
export const clickRollupRows = (click: string) =>
  ALL_KINDS.map((kind) => `('${CODES[kind]}'::"char", ${clickKey(kind, click).join(", ")})`).join(",\n")
