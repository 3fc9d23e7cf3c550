/** A cell of an exported row: text, a number, a flag, or nothing (an empty cell). */
export type Cell = string | number | boolean | null

/** Text a spreadsheet would read as a formula (or as the start of one, after a tab or CR). */
const FORMULA_START = /^[=+\-@\t\r]/

/** Characters that make RFC 4180 quote a field. */
const NEEDS_QUOTES = /[",\r\n]/

/**
 * One field as RFC 4180 writes it. Text that a spreadsheet would evaluate (starting with =, +, -, @,
 * tab or CR) gets a leading `'`, so that it is shown as the text it is (OWASP's advice against CSV
 * injection); then a field holding a quote, comma, CR or LF is quoted, its quotes doubled. Numbers
 * and flags are ours, never a client's text, and are written as they are.
 */
export const csvField = (cell: Cell): string => {
  if (cell === null) return ""
  if (typeof cell !== "string") return String(cell)
  const text = FORMULA_START.test(cell) ? `'${cell}` : cell
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** One record: its fields separated by commas, ended by CRLF. */
export const csvRecord = (cells: ReadonlyArray<Cell>): string => `${cells.map(csvField).join(",")}\r\n`
