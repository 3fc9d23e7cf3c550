/** One CSV record: its fields and the line of the file it starts on (1-based). */
export interface CsvRecord {
  readonly line: number
  readonly fields: ReadonlyArray<string>
}

/** The text is not well-formed CSV (RFC 4180): where, and why. */
export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string
  ) {
    super(`line ${line}: ${reason}`)
  }
}

const QUOTE = 34
const COMMA = 44
const CR = 13
const LF = 10

/**
 * The most characters one record may span, quotes and separators included. A link's longest record
 * (our own export: URL, redirect URL with UTM, notes, tags) is about 15,000; a longer one is most
 * likely a quote left open swallowing the file, and refusing it keeps the reader's memory bounded.
 */
export const MAX_RECORD_CHARS = 65_536

/**
 * Records of RFC 4180 CSV read chunk by chunk from `chunks` (text, already decoded): fields quoted
 * or not, `""` inside quotes for a quote, line breaks inside quotes kept, CRLF, LF or a lone CR
 * ending a record. A leading byte-order mark is dropped and empty lines are skipped. A quote inside
 * an unquoted field, anything but a comma or a line break after a closing quote, a quote never
 * closed, or a record over `MAX_RECORD_CHARS` is a `CsvSyntaxError` naming the line.
 */
export async function* csvRecords(chunks: AsyncIterable<string>): AsyncGenerator<CsvRecord> {
  let fields: Array<string> = []
  let field = ""
  /** Outside a field's quotes: "start" of a field, "plain" inside an unquoted one, "closed" after its closing quote. */
  let state: "start" | "plain" | "quoted" | "closed" = "start"
  let pendingQuote = false
  let line = 1
  let recordLine = 1
  let lastWasCr = false
  let first = true
  const records: Array<CsvRecord> = []
  /** Characters of the chunks before this one, and where the record being read starts, counted the same way. */
  let base = 0
  let recordStart = 0

  const insideQuotes = () => state === "quoted" && !pendingQuote
  // Checked whenever the record grows, so a field is never held past the limit (plus one chunk).
  const bounded = (at: number) => {
    if (base + at - recordStart > MAX_RECORD_CHARS) {
      throw new CsvSyntaxError(recordLine, `a record longer than ${MAX_RECORD_CHARS.toLocaleString("en-US")} characters (a link needs far fewer: is a quote left open?)`)
    }
  }
  const endRecord = () => {
    fields.push(field)
    if (!(fields.length === 1 && fields[0] === "" && state === "start")) records.push({ line: recordLine, fields })
    fields = []
    field = ""
    state = "start"
  }

  for await (let text of chunks) {
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
      first = false
    }
    // Where the field's text not yet in `field` starts in this chunk (-1: none): added as one slice,
    // since a string grown a character at a time costs ~36 bytes a character.
    let from = state === "plain" || insideQuotes() ? 0 : -1
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (state === "quoted") {
        if (pendingQuote) {
          pendingQuote = false
          if (c === QUOTE) {
            field += '"'
            from = i + 1
            bounded(i)
            continue
          }
          state = "closed"
        } else {
          if (c === QUOTE) {
            field += text.slice(from, i)
            pendingQuote = true
            lastWasCr = false
            continue
          }
          if (c === LF) {
            if (!lastWasCr) line++
            lastWasCr = false
          } else if (c === CR) {
            line++
            lastWasCr = true
          } else lastWasCr = false
          continue
        }
      }
      if (c === LF && lastWasCr) {
        lastWasCr = false
        continue
      }
      lastWasCr = c === CR
      if (state === "plain") {
        if (c !== COMMA && c !== LF && c !== CR) {
          if (c === QUOTE) throw new CsvSyntaxError(line, "a quote inside an unquoted field (quote the whole field and double the quote)")
          continue
        }
        field += text.slice(from, i)
      }
      if (c === COMMA) {
        bounded(i)
        fields.push(field)
        field = ""
        state = "start"
      } else if (c === LF || c === CR) {
        bounded(i)
        endRecord()
        line++
        recordLine = line
        recordStart = base + i + 1
      } else if (state === "closed") {
        throw new CsvSyntaxError(line, "text after the closing quote of a field (a comma or the end of the line was expected)")
      } else if (c === QUOTE) {
        state = "quoted"
        from = i + 1
      } else {
        state = "plain"
        from = i
      }
      if (records.length > 0) {
        yield* records
        records.length = 0
      }
    }
    if (state === "plain" || insideQuotes()) field += text.slice(from)
    bounded(text.length)
    base += text.length
  }
  if (insideQuotes()) throw new CsvSyntaxError(recordLine, "a quoted field is never closed")
  if (state !== "start" || field !== "" || fields.length > 0) endRecord()
  yield* records
}
