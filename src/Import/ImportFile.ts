import { createHash, type Hash } from "node:crypto"
import { createReadStream } from "node:fs"
import { open, stat } from "node:fs/promises"
import { CsvSyntaxError, csvRecords } from "./Csv.ts"
import type { ImportSource } from "./SourceNames.ts"
import { csvReading, jsonRows, type SourceRow, UnusableFile } from "./Sources.ts"

/** A JSON source (an API's answer) is read whole; its pages are small, so even many saved together fit this. */
export const MAX_JSON_BYTES = 256 * 1024 * 1024

/** A file checked as a whole, ready to be read row by row. */
export interface ImportFile {
  readonly sha256: string
  /** The rows it holds (the header aside). */
  readonly rows: number
  /** What a row's number counts: CSV lines, or entries of a JSON list. */
  readonly unit: "line" | "entry"
  /** Its rows from the first (a CSV file is read again, as a stream). */
  readonly read: () => AsyncIterable<SourceRow>
}

const linesIn = (text: string) => {
  let count = 0
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count++
  return count
}

/**
 * The file's text, chunk by chunk, as strict UTF-8: bytes that are not UTF-8 or a NUL character
 * (a binary file) end it with `UnusableFile` naming the line. `hash`, when given, sees every byte.
 */
async function* textOf(path: string, hash?: Hash): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true })
  let line = 1
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    if (!(chunk instanceof Buffer)) continue
    hash?.update(chunk)
    let text: string
    try {
      text = decoder.decode(chunk, { stream: true })
    } catch {
      const lenient = new TextDecoder("utf-8").decode(chunk)
      throw new UnusableFile(`line ${line + linesIn(lenient.slice(0, Math.max(0, lenient.indexOf("\ufffd"))))}: bytes that are not UTF-8 text (is this the export file?)`)
    }
    const nul = text.indexOf("\u0000")
    if (nul >= 0) throw new UnusableFile(`line ${line + linesIn(text.slice(0, nul))}: a NUL byte: this is a binary file, not the text export`)
    line += linesIn(text)
    yield text
  }
  try {
    const rest = decoder.decode()
    if (rest !== "") yield rest
  } catch {
    throw new UnusableFile(`line ${line}: the file ends inside a UTF-8 character`)
  }
}

const csvRows = (path: string, source: ImportSource) => {
  const records = async function* (hash?: Hash) {
    try {
      yield* csvRecords(textOf(path, hash))
    } catch (failure) {
      if (failure instanceof CsvSyntaxError) throw new UnusableFile(failure.message)
      throw failure
    }
  }
  return async (): Promise<ImportFile> => {
    const hash = createHash("sha256")
    let reading: ReturnType<typeof csvReading> | undefined
    let rows = 0
    for await (const record of records(hash)) {
      if (reading === undefined) {
        reading = csvReading(source, record.fields)
        if (reading.header) continue
      }
      rows++
    }
    if (reading === undefined) throw new UnusableFile("the file is empty")
    const { header, row } = reading
    return {
      sha256: hash.digest("hex"),
      rows,
      unit: "line",
      read: async function* () {
        let first = header
        for await (const record of records()) {
          if (first) first = false
          else yield row(record.line, record.fields)
        }
      }
    }
  }
}

const jsonFile = async (path: string, source: ImportSource, size: number): Promise<ImportFile> => {
  if (size > MAX_JSON_BYTES) throw new UnusableFile(`a JSON export is read whole, and this one is over ${MAX_JSON_BYTES / 1024 / 1024} MiB: split it`)
  const hash = createHash("sha256")
  let text = ""
  for await (const chunk of textOf(path, hash)) text += chunk
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch (failure) {
    throw new UnusableFile(`the file is not valid JSON (${failure instanceof Error ? failure.message : String(failure)})`)
  }
  const rows = jsonRows(source, document)
  return {
    sha256: hash.digest("hex"),
    rows: rows.length,
    unit: "entry",
    read: async function* () {
      yield* rows
    }
  }
}

/** Whether the file's first character other than white space opens JSON. */
const looksLikeJson = async (path: string) => {
  const handle = await open(path, "r")
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4096), 0, 4096, 0)
    const start = buffer.subarray(0, bytesRead).toString("utf8").replace(/^\ufeff/, "").trimStart()
    return start.startsWith("{") || start.startsWith("[")
  } finally {
    await handle.close()
  }
}

/**
 * The file at `path` read as `source`'s export and checked as a whole (encoding, CSV syntax,
 * header, JSON shape) before anything is written: `UnusableFile` says why not. Kutt and Bitly are
 * JSON (their API's answers); YOURLS is JSON (`action=stats`) or CSV (its table); the others CSV.
 */
export const openImportFile = async (path: string, source: ImportSource): Promise<ImportFile> => {
  const info = await stat(path).catch(() => undefined)
  if (info === undefined || !info.isFile()) throw new UnusableFile(`${path} is not a readable file`)
  const json = source === "kutt" || source === "bitly" || (source === "yourls" && (await looksLikeJson(path)))
  return json ? jsonFile(path, source, info.size) : csvRows(path, source)()
}
