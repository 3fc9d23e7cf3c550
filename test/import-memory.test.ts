/**
 * The CSV importer in bounded memory (issue #43, finding 7): a record is refused past
 * `MAX_RECORD_CHARS`, and a 40 MB quoted field costs the reader well under its own size, where it
 * once cost about 36 bytes of memory per byte (a character appended at a time).
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { csvRecords, MAX_RECORD_CHARS } from "../src/Import/Csv.ts"

const dir = mkdtempSync(join(tmpdir(), "links-import-memory-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const FIELD_BYTES = 40 * 1024 * 1024

/** Run in a child so that its peak RSS is its own; the heap cap keeps the old reader from taking the machine's memory. */
const CHILD = `
const { openImportFile } = await import(process.env.IMPORT_FILE_MODULE)
globalThis.gc?.()
const before = process.memoryUsage().rss
let message = "read without error"
try { await openImportFile(process.env.IMPORT_PATH, "csv") } catch (failure) { message = String(failure.message) }
console.log(JSON.stringify({ message, before, peak: process.resourceUsage().maxRSS * 1024 }))
`

interface ChildAnswer {
  readonly message: string
  readonly before: number
  readonly peak: number
}

const importInChild = (path: string) =>
  new Promise<ChildAnswer>((resolve, reject) => {
    const env = { ...process.env, IMPORT_PATH: path, IMPORT_FILE_MODULE: new URL("../src/Import/ImportFile.ts", import.meta.url).href }
    execFile(
      process.execPath,
      ["--max-old-space-size=512", "--expose-gc", "--import", "tsx", "--input-type=module", "-e", CHILD],
      { env, timeout: 120_000, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`the child failed (${error.message}): ${stderr.slice(-2000)}`))
        else resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}"))
      }
    )
  })

/** The records of `text` fed in chunks of `size` characters. */
const records = async (text: string, size: number) => {
  async function* chunks() {
    for (let at = 0; at < text.length; at += size) yield text.slice(at, at + size)
  }
  const found: Array<{ line: number; fields: ReadonlyArray<string> }> = []
  for await (const record of csvRecords(chunks())) found.push(record)
  return found
}

const failureOf = (text: string, size: number) =>
  records(text, size).then(
    () => "read without error",
    (failure: unknown) => (failure instanceof Error ? failure.message : String(failure))
  )

describe("CSV import in bounded memory", () => {
  it("refuses a 40 MB quoted field naming its line, its peak RSS growing by far less than the field", async () => {
    const path = join(dir, "big-field.csv")
    writeFileSync(path, Buffer.concat([Buffer.from('alias,url\nok,https://example.com/\nbig,"'), Buffer.alloc(FIELD_BYTES, "x"), Buffer.from('"\n')]))
    const answer = await importInChild(path)
    const growth = answer.peak - answer.before
    console.log(`40 MB quoted field: refused; peak RSS ${(answer.peak / 2 ** 20).toFixed(0)} MiB, ${(growth / 2 ** 20).toFixed(1)} MiB over the RSS before the read`)
    expect(answer.message).toBe("line 3: a record longer than 65,536 characters (a link needs far fewer: is a quote left open?)")
    // The reader holds at most a record's limit plus a 1 MiB chunk; the old one needed about 1.4 GB here.
    expect(growth).toBeLessThan(64 * 2 ** 20)
  })

  it("reads a record of up to MAX_RECORD_CHARS across any chunking, quotes doubled and lines broken inside it, and refuses one character more", async () => {
    const inner = 'say ""hi""\r\n'.repeat(1000)
    const value = inner.replaceAll('""', '"')
    const record = (pad: number) => `a,"${inner}${"y".repeat(pad)}"`
    const fits = MAX_RECORD_CHARS - record(0).length
    for (const size of [1, 7, 4096, 1 << 20]) {
      expect(await records(`h\n${record(fits)}\nlast`, size)).toEqual([
        { line: 1, fields: ["h"] },
        { line: 2, fields: ["a", value + "y".repeat(fits)] },
        { line: 1003, fields: ["last"] }
      ])
      expect(await failureOf(`h\n${record(fits + 1)}\nlast`, size)).toMatch(/^line 2: a record longer than 65,536 characters/)
    }
  })

  it("bounds a record of many fields and a field of doubled quotes as it does one long field", async () => {
    for (const size of [5, 1 << 20]) {
      expect(await failureOf(`a,b\n${",".repeat(MAX_RECORD_CHARS + 1)}\n`, size)).toMatch(/^line 2: a record longer/)
      expect(await failureOf(`a,b\n"${'""'.repeat(MAX_RECORD_CHARS)}"\n`, size)).toMatch(/^line 2: a record longer/)
      expect(await failureOf(`a,b\n${"z".repeat(MAX_RECORD_CHARS + 1)}`, size)).toMatch(/^line 2: a record longer/)
    }
  })
})
