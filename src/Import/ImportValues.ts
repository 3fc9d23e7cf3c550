import { MAX_TIMESTAMP } from "../Links/LinkDates.ts"

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i

/**
 * A creation date as the sources write it, in Unix seconds: ISO 8601 (Shlink's `2024-05-01T10:00:00+02:00`,
 * Kutt's `...Z`, Bitly's `+0000` without a colon), a date alone, MySQL's `YYYY-MM-DD HH:MM:SS`
 * (YOURLS; no zone means UTC), or Unix seconds. Undefined for anything else, an impossible day or
 * time, or a year outside 1970-9999.
 */
export const parseCreated = (raw: string | number): number | undefined => {
  if (typeof raw === "number") return Number.isInteger(raw) && raw >= 0 && raw <= MAX_TIMESTAMP ? raw : undefined
  const text = raw.trim()
  if (/^\d{1,12}$/.test(text)) return parseCreated(Number(text))
  const match = ISO.exec(text)
  if (match === null) return undefined
  const [year, month, day, hour = 0, minute = 0, second = 0] = match.slice(1, 7).map((part) => (part === undefined ? undefined : Number(part)))
  const zone = match[8]
  if (year === undefined || month === undefined || day === undefined || year < 1970) return undefined
  const millis = Date.UTC(year, month - 1, day, hour, minute, second)
  const date = new Date(millis)
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) return undefined
  let offset = 0
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const digits = zone.slice(1).replace(":", "")
    const hours = Number(digits.slice(0, 2))
    const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0
    if (hours > 14 || minutes > 59) return undefined
    offset = (zone.startsWith("-") ? -1 : 1) * (hours * 60 + minutes) * 60
  }
  return parseCreated(Math.floor(millis / 1000) - offset)
}

/** A click count: a whole number from 0 (digits, or a JSON number); undefined otherwise. */
export const parseClicks = (raw: string | number): number | undefined => {
  const value = typeof raw === "number" ? raw : /^\s*\d{1,15}\s*$/.test(raw) ? Number(raw) : Number.NaN
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

/** Tag names of one cell, `|`-separated as Shlink writes them or one a line as our export does; empty names dropped. */
export const splitTags = (cell: string): ReadonlyArray<string> =>
  cell
    .split(/[|\r\n]/)
    .map((name) => name.trim())
    .filter((name) => name !== "")
