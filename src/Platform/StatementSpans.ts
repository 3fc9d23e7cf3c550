import type { Span, SpanProcessor } from "@opentelemetry/sdk-trace-base"

/** The statement with every parenthesised part removed: what is left is its top level. */
const topLevel = (text: string) => {
  let flat = text
  for (let previous = ""; previous !== flat; ) {
    previous = flat
    flat = flat.replace(/\([^()]*\)/g, " ")
  }
  return flat
}

const TARGET: Readonly<Record<string, RegExp>> = {
  SELECT: /\bFROM\s+([A-Za-z_][\w.]*)/i,
  DELETE: /\bDELETE\s+FROM\s+([A-Za-z_][\w.]*)/i,
  INSERT: /\bINSERT\s+INTO\s+([A-Za-z_][\w.]*)/i,
  UPDATE: /(?<!\b(?:FOR|KEY|DO)\s+)\bUPDATE\s+([A-Za-z_][\w.]*)/i
}

/** `FOR UPDATE`, `FOR NO KEY UPDATE` and `DO UPDATE` lock or resolve a conflict: they are no UPDATE statement. */
const WRITE = /(?<!\b(?:FOR|KEY|DO)\s+)\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s/i

/**
 * `SELECT links`, `INSERT clicks`, `BEGIN`: the operation of a statement and the table it names
 * first. A statement with CTEs is named after the write one of them does, if any, else its SELECT.
 */
export const statementSummary = (text: string): { readonly operation: string; readonly name: string } | undefined => {
  const plain = text.replace(/--[^\n]*/g, " ").replace(/\/\*[\s\S]*?\*\//g, " ")
  const flat = topLevel(plain)
  const first = /^\s*([A-Za-z]+)/.exec(flat)?.[1]?.toUpperCase()
  if (first === undefined) return undefined
  const write = first === "WITH" ? WRITE.exec(plain)?.[1]?.split(/\s/)[0]?.toUpperCase() : undefined
  const operation = write ?? (first === "WITH" ? (/\bSELECT\b/i.test(flat) ? "SELECT" : first) : first)
  const target = TARGET[operation]?.exec(write === undefined ? flat : plain)?.[1]
  return { operation, name: target === undefined ? operation : `${operation} ${target}` }
}

/**
 * `@effect/sql` names every statement's span `sql.execute` with `db.operation.name` its own method
 * ("execute"): they are renamed as the database conventions ask, `SELECT links`, with the SQL
 * operation as `db.operation.name`. The statement itself is already `db.query.text`.
 */
export const statementNames: SpanProcessor = {
  onStart: () => undefined,
  onEnding: (span: Span) => {
    if (span.name !== "sql.execute") return
    const text = span.attributes["db.query.text"]
    const summary = typeof text === "string" ? statementSummary(text) : undefined
    if (summary === undefined) return
    span.updateName(summary.name)
    span.setAttribute("db.operation.name", summary.operation)
  },
  onEnd: () => undefined,
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve()
}
