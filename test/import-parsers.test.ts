import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { parseInvocation } from "../src/Cli/Arguments.ts"
import { Command } from "../src/Cli/Command.ts"
import { CsvSyntaxError, csvRecords } from "../src/Import/Csv.ts"
import { readImportRow } from "../src/Import/ImportRows.ts"
import { parseClicks, parseCreated } from "../src/Import/ImportValues.ts"
import { csvReading, jsonRows, UnusableFile } from "../src/Import/Sources.ts"

/** The records of `text` fed in chunks of `size` characters (so that every state meets a chunk's end). */
const records = async (text: string, size = 3) => {
  async function* chunks() {
    for (let at = 0; at < text.length; at += size) yield text.slice(at, at + size)
  }
  const found: Array<{ line: number; fields: ReadonlyArray<string> }> = []
  for await (const record of csvRecords(chunks())) found.push(record)
  return found
}

const syntaxError = async (text: string) => {
  const failure = await records(text).then(
    () => undefined,
    (error: unknown) => error
  )
  expect(failure).toBeInstanceOf(CsvSyntaxError)
  return failure instanceof CsvSyntaxError ? { line: failure.line, message: failure.message } : undefined
}

describe("CSV records (RFC 4180)", () => {
  it("reads quoted fields, doubled quotes, line breaks inside quotes, CRLF and LF, a BOM, with the line each record starts on", async () => {
    for (const size of [1, 2, 3, 7, 1000]) {
      expect(await records('\ufeffa,b,c\r\n"x, y","say ""hi""",\n"two\r\nlines",,"end"\n\nlast', size)).toEqual([
        { line: 1, fields: ["a", "b", "c"] },
        { line: 2, fields: ["x, y", 'say "hi"', ""] },
        { line: 3, fields: ["two\r\nlines", "", "end"] },
        { line: 6, fields: ["last"] }
      ])
    }
  })

  it("keeps a quoted field that ends the file, and an empty quoted field", async () => {
    expect(await records('a,""\n"b"')).toEqual([
      { line: 1, fields: ["a", ""] },
      { line: 2, fields: ["b"] }
    ])
    expect(await records("a\rb\r")).toEqual([
      { line: 1, fields: ["a"] },
      { line: 2, fields: ["b"] }
    ])
  })

  it("refuses bad quoting with the line it is on", async () => {
    expect(await syntaxError('a,b\nc,d"e\n')).toEqual({ line: 2, message: expect.stringMatching(/^line 2: a quote inside an unquoted field/) })
    expect(await syntaxError('a,b\n"c"d,e\n')).toEqual({ line: 2, message: expect.stringMatching(/^line 2: text after the closing quote/) })
    expect(await syntaxError('a,b\n\n"c,d\ne,f\n')).toEqual({ line: 3, message: "line 3: a quoted field is never closed" })
  })
})

describe("import values", () => {
  it("reads the creation dates the sources write", () => {
    expect(parseCreated("2024-05-01T10:00:00+02:00")).toBe(Date.UTC(2024, 4, 1, 8) / 1000)
    expect(parseCreated("2020-04-01T12:00:00+0000")).toBe(Date.UTC(2020, 3, 1, 12) / 1000)
    expect(parseCreated("2023-02-03T04:05:06.789Z")).toBe(Date.UTC(2023, 1, 3, 4, 5, 6) / 1000)
    expect(parseCreated("2019-12-31 23:59:59")).toBe(Date.UTC(2019, 11, 31, 23, 59, 59) / 1000)
    expect(parseCreated("2019-12-31")).toBe(Date.UTC(2019, 11, 31) / 1000)
    expect(parseCreated("1700000000")).toBe(1_700_000_000)
    expect(parseCreated(1_700_000_000)).toBe(1_700_000_000)
    for (const bad of ["2019-02-30", "2019-13-01", "yesterday", "2019-01-01T25:00:00Z", "1969-12-31", "12/31/2019", ""]) {
      expect(parseCreated(bad), bad).toBeUndefined()
    }
    expect(parseClicks("42")).toBe(42)
    expect(parseClicks(7)).toBe(7)
    expect(parseClicks("-1")).toBeUndefined()
    expect(parseClicks("1.5")).toBeUndefined()
    expect(parseClicks(2.5)).toBeUndefined()
  })

  it("applies the link rules to a row, naming the rule broken", () => {
    const now = 1_800_000_000
    const row = { line: 4, alias: "spring", url: "example.com/a", title: "Spring", notes: "sale", tags: ["Promo", "promo", "x"], created: "2024-01-01", clicks: "3" }
    expect(readImportRow(row, now)).toEqual(
      Either.right({ line: 4, alias: "spring", url: "http://example.com/a", notes: "Spring\nsale", tags: ["Promo", "x"], created: Date.UTC(2024, 0, 1) / 1000, clicks: 3 })
    )
    const reason = (change: object) => Either.getLeft(readImportRow({ ...row, ...change }, now))
    expect(reason({ url: "ftp://example.com" })).toEqual(expect.objectContaining({ value: expect.stringMatching(/long URL/) }))
    expect(reason({ url: undefined })).toEqual(expect.objectContaining({ value: "no long URL" }))
    expect(reason({ alias: "has space" })).toEqual(expect.objectContaining({ value: expect.stringMatching(/alias may hold only/) }))
    expect(reason({ alias: "api" })).toEqual(expect.objectContaining({ value: "the alias is reserved" }))
    expect(reason({ alias: "a".repeat(41) })).toEqual(expect.objectContaining({ value: expect.stringMatching(/longer than 40/) }))
    expect(reason({ created: "soon" })).toEqual(expect.objectContaining({ value: expect.stringMatching(/"soon" is not a date/) }))
    expect(reason({ created: String(now + 10) })).toEqual(expect.objectContaining({ value: "the creation date is in the future" }))
    expect(reason({ clicks: "many" })).toEqual(expect.objectContaining({ value: expect.stringMatching(/click count/) }))
    expect(reason({ tags: ["a\u0001"] })).toEqual(expect.objectContaining({ value: expect.stringMatching(/tag name/) }))
  })
})

describe("source formats", () => {
  it("reads each CSV source's header, and refuses a header that is not the source's", () => {
    const own = csvReading("csv", ["URL", "alias", "tags"])
    expect(own.row(2, ["https://e.example/", "a1", "x|y"])).toEqual(expect.objectContaining({ line: 2, url: "https://e.example/", alias: "a1", tags: ["x", "y"] }))
    expect(own.row(3, ["https://e.example/"]).problem).toBe("1 field(s) where the header has 3")
    expect(() => csvReading("csv", ["url", "alais"])).toThrow(/line 1: unknown column "alais"/)
    expect(() => csvReading("csv", ["alias", "title"])).toThrow(/no "url" column/)
    expect(() => csvReading("shlink", ["url", "code"])).toThrow(UnusableFile)
    const shlink = csvReading("shlink", ["Long URL", "Short code", "Domain", "Title", "Tags"])
    expect(shlink.row(2, ["https://e.example/", "abc", "s.test", "T", "a|b"])).toEqual(
      expect.objectContaining({ url: "https://e.example/", alias: "abc", title: "T", tags: ["a", "b"] })
    )
    const headerless = csvReading("yourls", ["ozh", "https://ozh.org/", "NULL", "2020-01-01 10:00:00", "127.0.0.1", "12"])
    expect(headerless.header).toBe(false)
    expect(headerless.row(1, ["ozh", "https://ozh.org/", "NULL", "2020-01-01 10:00:00", "127.0.0.1", "12"])).toEqual(
      expect.objectContaining({ alias: "ozh", url: "https://ozh.org/", title: undefined, created: "2020-01-01 10:00:00", clicks: "12" })
    )
    expect(() => csvReading("yourls", ["a", "b"])).toThrow(/YOURLS export needs/)
  })

  it("reads the links of each API's JSON, one page or several", () => {
    const kutt = { total: 1, limit: 50, skip: 0, data: [{ address: "k1", target: "https://k.example/", description: "K", visit_count: 5, created_at: "2024-01-02T03:04:05.000Z" }] }
    expect(jsonRows("kutt", kutt)).toEqual([expect.objectContaining({ line: 1, alias: "k1", url: "https://k.example/", title: "K", clicks: 5 })])
    expect(jsonRows("kutt", [kutt, kutt])).toHaveLength(2)
    const bitly = { links: [{ id: "bit.ly/3xYz", link: "https://bit.ly/3xYz", long_url: "https://b.example/", title: "B", tags: ["t"], created_at: "2020-04-01T12:00:00+0000" }], pagination: {} }
    expect(jsonRows("bitly", bitly)).toEqual([expect.objectContaining({ alias: "3xYz", url: "https://b.example/", tags: ["t"] })])
    const yourls = { links: { link_1: { shorturl: "https://y.example/ozh", url: "https://ozh.org/", title: "ozh", timestamp: "2020-01-01 10:00:00", ip: "1.2.3.4", clicks: "9" } }, stats: {} }
    expect(jsonRows("yourls", yourls)).toEqual([expect.objectContaining({ alias: "ozh", url: "https://ozh.org/", clicks: "9" })])
    expect(jsonRows("kutt", { data: [{ target: 5 }, "x"] })).toEqual([
      expect.objectContaining({ line: 1, problem: '"target" is not text' }),
      expect.objectContaining({ line: 2, problem: "the entry is not a JSON object" })
    ])
    expect(() => jsonRows("bitly", { data: [] })).toThrow(/no "links" list/)
  })
})

describe("the import command line", () => {
  it.effect("reads the file, the source and the options; refuses a missing or second file and an unknown source", () =>
    Effect.gen(function* () {
      const read = (...args: ReadonlyArray<string>) => parseInvocation(args).command
      const refusal = (...args: ReadonlyArray<string>) => Effect.map(Effect.flip(read(...args)), (error) => error.message)
      expect(yield* read("import", "--from", "shlink", "urls.csv", "--domain", "3", "--dry-run", "--json")).toEqual(
        Command.Import({ path: "urls.csv", source: "shlink", domainId: 3, userId: undefined, dryRun: true, batchSize: 1000, json: true })
      )
      expect(yield* read("import", "x.json", "--from=kutt", "--domain", "3", "--user", "9", "--batch-size", "50")).toEqual(
        Command.Import({ path: "x.json", source: "kutt", domainId: 3, userId: 9, dryRun: false, batchSize: 50, json: false })
      )
      expect(yield* refusal("import", "--from", "csv", "--domain", "3")).toBe("import needs the FILE to import")
      expect(yield* refusal("import", "--from", "csv", "a.csv", "b.csv", "--domain", "3")).toBe('unexpected argument "b.csv"')
      expect(yield* refusal("import", "--from", "rebrandly", "a.csv", "--domain", "3")).toMatch(/^--from must be one of csv, shlink, yourls, kutt, bitly/)
      expect(yield* refusal("import", "--from", "csv", "a.csv", "--domain", "3", "--batch-size", "20000")).toBe("--batch-size must be at most 10000")
      expect(yield* refusal("migrate", "now")).toBe('unexpected argument "now"')
    })
  )
})
