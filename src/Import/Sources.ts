import { isPlainObject } from "../Links/InputValues.ts"
import { splitTags } from "./ImportValues.ts"
import type { ImportSource } from "./SourceNames.ts"


/**
 * One link as a source wrote it, before the link rules: `line` is the CSV line it starts on, or the
 * entry's position in a JSON list. `problem` says why the entry cannot be read at all (a field of the
 * wrong type, fewer fields than the header).
 */
export interface SourceRow {
  readonly line: number
  readonly alias?: string | undefined
  readonly url?: string | undefined
  readonly title?: string | undefined
  readonly notes?: string | undefined
  readonly tags: ReadonlyArray<string>
  readonly created?: string | number | undefined
  readonly clicks?: string | number | undefined
  readonly problem?: string | undefined
}

/** The file cannot be imported as the source it is said to be: nothing is written. */
export class UnusableFile extends Error {}

type Field = "alias" | "url" | "title" | "notes" | "tags" | "created" | "clicks"
/** A column known and left unread: what our own links export carries besides the fields. */
type Ignored = "ignored"

/** Which column holds which field, read from a header line. */
type Columns = Partial<Record<Field, number>>

/**
 * Our own format: these column names exactly (any order, any case), `url` required; the other
 * columns of our links export (`export links`) are known and not read, so an export imports as it is.
 */
const OWN_COLUMNS: Readonly<Record<string, Field | Ignored>> = {
  alias: "alias",
  url: "url",
  title: "title",
  notes: "notes",
  tags: "tags",
  created: "created",
  clicks: "clicks",
  ...Object.fromEntries(
    ["id", "short_link", "redirect_url", "status", "redirect_type", "user_id", "modified", "archive_on", "delete_on", "last_clicked"].map(
      (name) => [name, "ignored" as const]
    )
  )
}

/**
 * Shlink's CSV, as its web client exports it (createdAt, domain, shortCode, shortUrl, longUrl, title,
 * tags, visits) and as shlink-importer reads it (Long URL, Short code, Title, Tags, Domain): names
 * compared in lower case without spaces; other columns are ignored.
 */
const SHLINK_COLUMNS: Readonly<Record<string, Field>> = {
  longurl: "url",
  shortcode: "alias",
  title: "title",
  tags: "tags",
  createdat: "created",
  datecreated: "created",
  visits: "clicks",
  visitscount: "clicks"
}

/** YOURLS's `yourls_url` table (keyword, url, title, timestamp, ip, clicks), exported as CSV. */
const YOURLS_TABLE = ["keyword", "url", "title", "timestamp", "ip", "clicks"] as const
const YOURLS_COLUMNS: Readonly<Record<string, Field>> = { keyword: "alias", url: "url", title: "title", timestamp: "created", clicks: "clicks" }

const listed = (names: ReadonlyArray<string>) => names.map((name) => `"${name}"`).join(", ")

const columnsOf = (
  header: ReadonlyArray<string>,
  known: Readonly<Record<string, Field | Ignored>>,
  normalise: (name: string) => string,
  strict: boolean
): Columns => {
  const columns: Columns = {}
  for (const [index, raw] of header.entries()) {
    const name = normalise(raw)
    const field = Object.hasOwn(known, name) ? known[name] : undefined
    if (field === undefined) {
      if (strict) throw new UnusableFile(`line 1: unknown column "${raw}" (the columns are ${listed(Object.keys(known))})`)
      continue
    }
    if (field === "ignored") continue
    if (columns[field] !== undefined && strict) throw new UnusableFile(`line 1: the column "${raw}" is given twice`)
    columns[field] ??= index
  }
  return columns
}

/** How the records after the header become rows. */
export interface CsvReading {
  /** Whether the first record is a header (skipped). */
  readonly header: boolean
  readonly row: (line: number, fields: ReadonlyArray<string>) => SourceRow
}

/** Our export's guard against spreadsheet formulas: a `'` before text starting with =, +, -, @, tab or CR. */
const FORMULA_GUARD = /^'(?=[=+\-@\t\r])/

/**
 * `nullText`: phpMyAdmin writes a NULL as `NULL` by default (YOURLS's title may be NULL).
 * `unguard`: drop our export's formula guard (our own format only).
 */
const rowOf = (columns: Columns, width: number, options: { readonly nullText?: string; readonly unguard?: boolean } = {}) => (line: number, fields: ReadonlyArray<string>): SourceRow => {
  const cell = (field: Field) => {
    const index = columns[field]
    const raw = index === undefined ? undefined : fields[index]
    const value = options.unguard === true ? raw?.replace(FORMULA_GUARD, "").trim() : raw?.trim()
    return value === "" || value === options.nullText ? undefined : value
  }
  return {
    line,
    alias: cell("alias"),
    url: cell("url"),
    title: cell("title"),
    notes: cell("notes"),
    tags: splitTags(cell("tags") ?? ""),
    created: cell("created"),
    clicks: cell("clicks"),
    problem: fields.length === width ? undefined : `${fields.length} field(s) where the header has ${width}`
  }
}

/** The reading of a CSV source, from its first record; `UnusableFile` when it is not that source's header. */
export const csvReading = (source: ImportSource, first: ReadonlyArray<string>): CsvReading => {
  switch (source) {
    case "csv": {
      const columns = columnsOf(first, OWN_COLUMNS, (name) => name.trim().toLowerCase(), true)
      if (columns.url === undefined) throw new UnusableFile(`line 1: the header has no "url" column (the columns are ${listed(Object.keys(OWN_COLUMNS))})`)
      return { header: true, row: rowOf(columns, first.length, { unguard: true }) }
    }
    case "shlink": {
      const columns = columnsOf(first, SHLINK_COLUMNS, (name) => name.replace(/\s/g, "").toLowerCase(), false)
      if (columns.url === undefined) throw new UnusableFile(`line 1: a Shlink export needs a "longUrl" (or "Long URL") column; found ${listed(first)}`)
      return { header: true, row: rowOf(columns, first.length) }
    }
    case "yourls": {
      const names = first.map((name) => name.trim().toLowerCase())
      if (names.includes("url") && names.includes("keyword")) {
        return { header: true, row: rowOf(columnsOf(first, YOURLS_COLUMNS, (name) => name.trim().toLowerCase(), false), first.length, { nullText: "NULL" }) }
      }
      if (first.length === YOURLS_TABLE.length) {
        return { header: false, row: rowOf(columnsOf(YOURLS_TABLE, YOURLS_COLUMNS, (name) => name, false), YOURLS_TABLE.length, { nullText: "NULL" }) }
      }
      throw new UnusableFile(
        `line 1: a YOURLS export needs a header with "keyword" and "url", or the 6 columns of the yourls_url table (${YOURLS_TABLE.join(", ")}); found ${first.length} field(s)`
      )
    }
    case "kutt":
    case "bitly":
      throw new UnusableFile(`a ${source} export is the JSON of its API, not CSV`)
  }
}

const text = (entry: Readonly<Record<string, unknown>>, key: string, problems: Array<string>): string | undefined => {
  const value = entry[key]
  if (value === undefined || value === null) return undefined
  if (typeof value === "string") return value.trim() === "" ? undefined : value.trim()
  problems.push(`"${key}" is not text`)
  return undefined
}

const textOrNumber = (entry: Readonly<Record<string, unknown>>, key: string, problems: Array<string>): string | number | undefined => {
  const value = entry[key]
  return typeof value === "number" ? value : text(entry, key, problems)
}

/** The last segment of a short URL's path: its alias (`https://bit.ly/abc` and `bit.ly/abc` give `abc`; YOURLS may live in a folder). */
const aliasOfShortUrl = (shortUrl: string | undefined): string | undefined => {
  if (shortUrl === undefined) return undefined
  const path = shortUrl.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").replace(/[?#].*$/, "").replace(/\/+$/, "")
  const slash = path.lastIndexOf("/")
  return slash < 0 || slash === path.length - 1 ? undefined : path.slice(slash + 1)
}

const jsonRow = (source: "yourls" | "kutt" | "bitly", entry: unknown, line: number): SourceRow => {
  if (!isPlainObject(entry)) return { line, tags: [], problem: "the entry is not a JSON object" }
  const problems: Array<string> = []
  const tagsOf = (value: unknown): ReadonlyArray<string> => {
    if (value === undefined || value === null) return []
    if (Array.isArray(value) && value.every((tag) => typeof tag === "string")) return value.map((tag) => tag.trim()).filter((tag) => tag !== "")
    problems.push(`"tags" is not a list of names`)
    return []
  }
  const row = (() => {
    switch (source) {
      case "kutt":
        return {
          alias: text(entry, "address", problems),
          url: text(entry, "target", problems),
          title: text(entry, "description", problems),
          tags: [],
          created: textOrNumber(entry, "created_at", problems),
          clicks: textOrNumber(entry, "visit_count", problems)
        }
      case "bitly":
        return {
          alias: aliasOfShortUrl(text(entry, "link", problems) ?? text(entry, "id", problems)),
          url: text(entry, "long_url", problems),
          title: text(entry, "title", problems),
          tags: tagsOf(entry["tags"]),
          created: textOrNumber(entry, "created_at", problems)
        }
      case "yourls":
        return {
          alias: text(entry, "keyword", problems) ?? aliasOfShortUrl(text(entry, "shorturl", problems)),
          url: text(entry, "url", problems),
          title: text(entry, "title", problems),
          tags: [],
          created: textOrNumber(entry, "timestamp", problems),
          clicks: textOrNumber(entry, "clicks", problems)
        }
    }
  })()
  return { line, ...row, problem: problems.length === 0 ? undefined : problems.join("; ") }
}

/** Where each source's API answer keeps its links. */
const LIST_KEY = { kutt: "data", bitly: "links", yourls: "links" } as const

const entriesOf = (source: "yourls" | "kutt" | "bitly", document: unknown): ReadonlyArray<unknown> => {
  const key = LIST_KEY[source]
  const listIn = (page: unknown): ReadonlyArray<unknown> | undefined => {
    if (!isPlainObject(page)) return undefined
    const list = page[key]
    if (Array.isArray(list)) return list
    // YOURLS's action=stats answers {"links": {"link_1": {...}, "link_2": {...}}}.
    if (source === "yourls" && isPlainObject(list)) return Object.values(list)
    return undefined
  }
  const single = listIn(document)
  if (single !== undefined) return single
  if (Array.isArray(document)) {
    // Several pages of the API saved as one list, or a list of the links themselves.
    const pages = document.map(listIn)
    if (document.length > 0 && pages.every((page) => page !== undefined)) return pages.flatMap((page) => page ?? [])
    return document
  }
  throw new UnusableFile(`the JSON has no "${key}" list of links (an answer of the ${source} API, or a list of them, was expected)`)
}

/** The rows of a source's JSON document (its API's answer), each numbered by its position in the list. */
export const jsonRows = (source: ImportSource, document: unknown): ReadonlyArray<SourceRow> => {
  if (source === "csv" || source === "shlink") throw new UnusableFile(`a ${source} export is CSV, not JSON`)
  return entriesOf(source, document).map((entry, index) => jsonRow(source, entry, index + 1))
}
