const NUMERIC = /^(-|[-+]?[\d,.]+%?)$/

/** Rows as a plain-text table, columns padded to their widest cell; columns of numbers are right-aligned. */
export const formatTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)))
  const numeric = header.map((_, column) => rows.length > 0 && rows.every((row) => NUMERIC.test(row[column] ?? "")))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => (numeric[column] === true ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd()
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)].join("\n")
}
