/** A cell as an operator reads it: nothing for null, lists joined, times as UTC dates. */
const cell = (key: string, value: unknown): string => {
  if (value === null || value === undefined) return "-"
  if (Array.isArray(value)) return value.length === 0 ? "-" : value.map(String).join(",")
  if (key === "created" && typeof value === "number") return new Date(value * 1000).toISOString().slice(0, 19).replace("T", " ")
  return String(value)
}

/** Rows as a table with a header line, columns as wide as their widest cell. */
export const table = (rows: ReadonlyArray<Readonly<Record<string, unknown>>>, columns: ReadonlyArray<string>) => {
  const cells = rows.map((row) => columns.map((column) => cell(column, row[column])))
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)))
  const line = (values: ReadonlyArray<string>) => values.map((value, i) => value.padEnd(widths[i]!)).join("  ").trimEnd()
  return [line(columns), ...cells.map(line)].join("\n")
}

/** One record as `key  value` lines. */
export const record = (row: Readonly<Record<string, unknown>>) => {
  const width = Math.max(...Object.keys(row).map((key) => key.length))
  return Object.entries(row)
    .map(([key, value]) => `${key.padEnd(width)}  ${cell(key, value)}`)
    .join("\n")
}
