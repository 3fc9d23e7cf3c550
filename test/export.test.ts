import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either, LogLevel, Option, Stream } from "effect"
import { execFile, execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Accounts } from "../src/Accounts/Accounts.ts"
import { chunked } from "../src/Export/ChunkedReader.ts"
import { csvField, csvRecord } from "../src/Export/Csv.ts"
import { exportWindow } from "../src/Export/ExportWindow.ts"
import { DatabasePool, embeddedClientLayer } from "../src/Sql/Database.ts"
import { clickRow, writeClickRows, writeClicks } from "./support/Clicks.ts"
import { newDomain, newLink } from "./support/Fixtures.ts"
import { at, call, codes, newUser, type Reply, type TestUser, within } from "./support/Http.ts"
import { holdLocks, waitingOnLocks } from "./support/Locks.ts"
import { documentedCodes, openApiDocuments } from "./support/OpenApiShapes.ts"
import { makeTestDatabase, testServerUrl } from "./support/TestDatabase.ts"
import { BaseUrl, TestServer, TestServerOn } from "./support/TestServer.ts"
import { describeUnless, withoutServer } from "./support/SkipReasons.ts"

const ROOT = fileURLToPath(new URL("..", import.meta.url))

/** The server's data directory; on the embedded database the CLI reaches it through the server's socket there. */
const dataDir = mkdtempSync(join(tmpdir(), "links-export-"))
/** The CLI as `npm run build` bundles it, in a folder of this run (one below the repository, as dist/). */
const bundleDir = mkdtempSync(join(ROOT, ".vitest-cli-"))

beforeAll(() => {
  execFileSync(process.execPath, ["scripts/bundle-cli.mjs", bundleDir], { cwd: ROOT })
})

afterAll(() => {
  for (const dir of [dataDir, bundleDir]) rmSync(dir, { recursive: true, force: true })
})

/**
 * RFC 4180, strictly: fields separated by commas, records ended by CRLF (the last one too), quoted
 * fields with doubled quotes; a bare quote, CR or LF outside quotes is an error.
 */
const parseCsv = (text: string): Array<Array<string>> => {
  const records: Array<Array<string>> = []
  let record: Array<string> = []
  let field = ""
  /** Inside a quoted field; after one (only a comma or CRLF may follow). */
  let quoted = false
  let closed = false
  const endField = () => {
    record.push(field)
    field = ""
    closed = false
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c !== '"') field += c
      else if (text[i + 1] === '"') {
        field += '"'
        i++
      } else {
        quoted = false
        closed = true
      }
    } else if (c === ",") endField()
    else if (c === "\r" && text[i + 1] === "\n") {
      endField()
      records.push(record)
      record = []
      i++
    } else if (c === '"' && field === "" && !closed) quoted = true
    else if (c === '"' || c === "\r" || c === "\n" || closed) throw new Error(`unexpected ${JSON.stringify(c)} at ${i}`)
    else field += c
  }
  if (quoted || closed || field !== "" || record.length > 0) throw new Error("the last record does not end with CRLF")
  return records
}

/** A CSV file's records as objects keyed by its header. */
const table = (text: string) => {
  const [header, ...records] = parseCsv(text)
  if (header === undefined) throw new Error("no header")
  for (const record of records) expect(record.length).toBe(header.length)
  return { header, rows: records.map((record) => Object.fromEntries(header.map((name, i) => [name, record[i]!]))) }
}

const utc = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 19).replace("T", " ")

const get = (path: string, user: TestUser) => call("GET", path, { token: user.token })

const expectCsv = (reply: Reply, name: string) => {
  expect(reply.status, reply.text).toBe(200)
  expect(reply.headers.get("content-type")).toBe("text/csv; charset=utf-8")
  expect(reply.headers.get("content-disposition")).toBe(`attachment; filename="${name}"`)
}

const expectError = (reply: Reply, status: number, expected: ReadonlyArray<number>) => {
  expect(reply.status, reply.text).toBe(status)
  expect(codes(reply), reply.text).toEqual(expected)
}

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** The real CLI in a child process, on the server's database (its URL on PostgreSQL, its socket when embedded). */
const cli = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const { connection } = yield* DatabasePool
    const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "warning" }
    for (const name of ["DATABASE_URL", "TEST_DATABASE_URL", "REDIS_URL"]) delete env[name]
    if (connection.connectionString !== undefined) env["DATABASE_URL"] = connection.connectionString
    return yield* Effect.async<Run>((resume) => {
      const child = execFile(
        process.execPath,
        [join(bundleDir, "Cli", "main.js"), ...args],
        { cwd: ROOT, env, timeout: 90_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => resume(Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }))
      )
      return Effect.sync(() => child.kill())
    })
  })

/** Twenty days ago, on a whole minute: the clicks of these tests fall in one or two monthly partitions. */
const T0 = Math.floor((Date.now() / 1000 - 20 * 86_400) / 60) * 60

describe("CSV fields (Csv.ts)", () => {
  it("quotes what RFC 4180 needs quoted, doubles quotes, keeps unicode, and writes numbers, flags and nothing as they are", () => {
    expect(csvField("plain")).toBe("plain")
    expect(csvField("a,b")).toBe('"a,b"')
    expect(csvField('say "hi"')).toBe('"say ""hi"""')
    expect(csvField("line\r\nbreak")).toBe('"line\r\nbreak"')
    expect(csvField("Grüße ✓ 😀")).toBe("Grüße ✓ 😀")
    expect(csvField(-5)).toBe("-5")
    expect(csvField(true)).toBe("true")
    expect(csvField(null)).toBe("")
    expect(csvRecord(["a", 1, null, false])).toBe("a,1,,false\r\n")
  })

  it("neutralises text a spreadsheet would evaluate: =, +, -, @, tab or CR first get a leading quote", () => {
    expect(csvField("=1+1")).toBe("'=1+1")
    expect(csvField("+1")).toBe("'+1")
    expect(csvField("-dash")).toBe("'-dash")
    expect(csvField("@SUM(A1)")).toBe("'@SUM(A1)")
    expect(csvField("\tx")).toBe("'\tx")
    expect(csvField("\rx")).toBe("\"'\rx\"")
    expect(csvField('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"')
    expect(csvField("a=b")).toBe("a=b")
  })
})

describe("the window of a clicks export (ExportWindow.ts)", () => {
  it("needs both bounds, to after from, and at most one calendar year", () => {
    const codeOf = (from: number | undefined, to: number | undefined) =>
      Either.match(exportWindow(from, to), { onLeft: (failure) => failure.code, onRight: () => 0 })
    expect(codeOf(undefined, undefined)).toBe(10832)
    expect(codeOf(100, undefined)).toBe(10832)
    expect(codeOf(undefined, 100)).toBe(10832)
    expect(codeOf(100, 100)).toBe(10833)
    expect(codeOf(100, 99)).toBe(10833)
    const leap = Date.UTC(2028, 1, 29) / 1000
    expect(codeOf(leap, Date.UTC(2029, 2, 1) / 1000)).toBe(0)
    expect(codeOf(leap, Date.UTC(2029, 2, 1) / 1000 + 1)).toBe(10834)
    expect(exportWindow(0, 31_536_000)).toEqual(Either.right({ from: 0, to: 31_536_000 }))
  })
})

describe("the chunked reader (ChunkedReader.ts)", () => {
  const rows = Array.from({ length: 12_345 }, (_, n) => ({ key: n * 3 }))
  const reader = (reads: Array<{ after: Option.Option<number>; size: number; got: number }>) => (after: Option.Option<number>, size: number) =>
    Effect.sync(() => {
      const from = Option.match(after, { onNone: () => 0, onSome: (key) => rows.findIndex((row) => row.key > key) })
      const got = from === -1 ? [] : rows.slice(from, from + size)
      reads.push({ after, size, got: got.length })
      return got
    })

  it.effect("reads every row once, in order, each read after the last key and never more than a chunk", () =>
    Effect.gen(function* () {
      const reads: Array<{ after: Option.Option<number>; size: number; got: number }> = []
      const chunks = yield* Stream.runCollect(chunked(1000, reader(reads), (row) => row.key))
      expect([...chunks].flat()).toEqual(rows)
      expect([...chunks].map((chunk) => chunk.length)).toEqual([...Array.from({ length: 12 }, () => 1000), 345])
      expect(reads.map((read) => read.size)).toEqual(Array.from({ length: 13 }, () => 1000))
      expect(reads.map((read) => Option.getOrNull(read.after))).toEqual([null, ...Array.from({ length: 12 }, (_, n) => (n + 1) * 1000 * 3 - 3)])
      // A last chunk exactly full costs one more, empty read, and no empty chunk.
      const exact: typeof reads = []
      const even = yield* Stream.runCollect(chunked(12_345, reader(exact), (row) => row.key))
      expect([...even].map((chunk) => chunk.length)).toEqual([12_345])
      expect(exact.map((read) => read.got)).toEqual([12_345, 0])
    })
  )

  it.effect("reads a chunk only when the one before has been taken: what is held is bounded by the chunk size", () =>
    Effect.gen(function* () {
      const reads: Array<{ after: Option.Option<number>; size: number; got: number }> = []
      const first = yield* Stream.runCollect(Stream.take(chunked(500, reader(reads), (row) => row.key), 2))
      expect([...first].map((chunk) => chunk.length)).toEqual([500, 500])
      expect(reads.length).toBe(2)
    })
  )
})

describe("the OpenAPI documents list the exports under their own tag, with the codes each can answer", () => {
  it("v4 and v3", () => {
    const documents = openApiDocuments()
    for (const [document, prefix] of [[documents.v4, "/api/v4"], [documents.v3, "/api/v3"]] as const) {
      const paths = at(document, "paths") as Record<string, unknown>
      const links = `${prefix}/{domain_id}/export/links.csv`
      const clicks = `${prefix}/{domain_id}/export/clicks.csv`
      for (const path of [links, clicks]) {
        expect(at(paths, path, "get", "tags"), path).toEqual(["Export (extension)"])
        expect(Object.keys(at(paths, path, "get", "responses", "200", "content") as object), path).toEqual(["text/csv"])
      }
      expect(Object.keys(at(paths, links, "get", "responses") as object).sort()).toEqual(["200", "401", "403", "404", "500", "503"])
      expect(documentedCodes(document, links, "get", "403")).toEqual([10003])
      expect(documentedCodes(document, links, "get", "404")).toEqual([10101])
      expect(documentedCodes(document, clicks, "get", "400")).toEqual([10830, 10831, 10832, 10833, 10834, 10835])
      expect(documentedCodes(document, clicks, "get", "403")).toEqual([10003, 10504])
      expect(documentedCodes(document, clicks, "get", "404")).toEqual([10101, 10150])
      const parameters = at(paths, clicks, "get", "parameters") as ReadonlyArray<unknown>
      expect(parameters.map((parameter) => [at(parameter, "name"), at(parameter, "in"), at(parameter, "schema", "type")])).toEqual([
        ["domain_id", "path", "integer"],
        ["from_unix", "query", "integer"],
        ["to_unix", "query", "integer"],
        ["link_id", "query", "integer"]
      ])
    }
  })
})

const database = testServerUrl === undefined ? embeddedClientLayer(dataDir) : makeTestDatabase()

describe("exports (extension)", () => {
  layer(TestServerOn(database, { DATA_DIR: dataDir }, LogLevel.Warning), { excludeTestServices: true })((it) => {
    it.effect("links.csv: every link of the domain that is not deleted, by id, as E6 shows it, quoted and neutralised", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const domainId = yield* newDomain(admin)
        const other = yield* newDomain(admin)
        const notes = 'Grüße, "quoted"\r\nline two ✓ 😀'
        const formula = '=HYPERLINK("http://evil.example","click")'
        const first = yield* newLink(admin, domainId, {
          url: "https://example.com/a?x=1,2",
          alias: "spring",
          notes,
          tags: [{ name: "promo, summer", shared: true }, { name: "Ärger", shared: false }]
        })
        const dash = yield* newLink(admin, domainId, { alias: "-dash", notes: formula, tags: [{ name: "@team", shared: true }] })
        const plus = yield* newLink(member, domainId, { notes: "+1" })
        const tab = yield* newLink(admin, domainId, { notes: "\tTabbed" })
        const deleted = yield* newLink(admin, domainId, { notes: "gone" })
        const archived = yield* newLink(admin, domainId, { notes: "resting" })
        yield* newLink(admin, other, { notes: "elsewhere" })
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE links SET status = 'deleted' WHERE id = ${deleted}`
        yield* sql`UPDATE links SET status = 'archived' WHERE id = ${archived}`
        yield* writeClicks([
          { linkId: first, domainId, at: T0 },
          { linkId: first, domainId, at: T0 + 1 },
          { linkId: first, domainId, at: T0 + 2, bot: true }
        ])

        const reply = yield* get(`/api/v4/${domainId}/export/links.csv`, admin)
        expectCsv(reply, `links-domain-${domainId}.csv`)
        const { header, rows } = table(reply.text)
        expect(header).toEqual([
          "id", "alias", "short_link", "url", "redirect_url", "notes", "tags", "status", "redirect_type", "user_id",
          "created", "modified", "archive_on", "delete_on", "clicks", "last_clicked"
        ])
        expect(rows.map((row) => Number(row.id))).toEqual([first, dash, plus, tab, archived])

        const search = yield* get(`/api/v4/${domainId}/links?users=all`, admin)
        const links = at(search.body, "objects") as ReadonlyArray<Record<string, unknown>>
        const byId = new Map(links.map((link) => [link.id, link]))
        const neutral = (text: string) => (/^[=+\-@\t\r]/.test(text) ? `'${text}` : text)
        for (const row of rows) {
          const link = byId.get(Number(row.id))!
          const tags = (link.tags as ReadonlyArray<{ name: string }>).map((tag) => tag.name).join("\n")
          expect(row, String(link.id)).toEqual({
            id: String(link.id),
            alias: neutral(String(link.alias)),
            short_link: link.short_link,
            url: link.url,
            redirect_url: link.redirect_url,
            notes: neutral(String(link.notes)),
            tags: neutral(tags),
            status: link.status,
            redirect_type: String(link.redirect_type),
            user_id: String(link.user_id),
            created: utc(Number(link.created)),
            modified: utc(Number(link.modified)),
            archive_on: "",
            delete_on: "",
            clicks: row.id === String(first) ? "2" : "0",
            last_clicked: row.id === String(first) ? utc(T0 + 1) : ""
          })
        }
        const row = (id: number) => rows.find((r) => r.id === String(id))!
        expect(row(first).notes).toBe(notes)
        expect(row(first).url).toBe("https://example.com/a?x=1,2")
        expect(row(first).tags.split("\n").sort()).toEqual(["promo, summer", "Ärger"])
        expect(row(dash).alias).toBe("'-dash")
        expect(row(dash).notes).toBe(`'${formula}`)
        expect(row(dash).tags).toBe("'@team")
        expect(row(plus).notes).toBe("'+1")
        expect(row(plus).user_id).toBe(String(member.userId))
        expect(row(tab).notes).toBe("'\tTabbed")
        expect(row(archived).status).toBe("archived")
        // Version 3 serves the same file.
        expect((yield* get(`/api/v3/${domainId}/export/links.csv`, admin)).text).toBe(reply.text)
      })
    )

    it.effect("clicks.csv: the window's clicks of the domain, oldest first, bots flagged, one link with link_id, never the address", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const domainId = yield* newDomain(admin)
        const other = yield* newDomain(admin)
        const a = yield* newLink(admin, domainId, { alias: "a" })
        const b = yield* newLink(admin, domainId, { alias: "b" })
        const elsewhere = yield* newLink(admin, other)
        const rows = [
          clickRow({ linkId: a, domainId, at: T0 + 10, country: "DE", region: "Berlin", city: "Berlin", device: "mobile", referrer: "news.example", qr: true, ip: "198.51.100.7" }),
          clickRow({ linkId: b, domainId, at: T0 + 20, bot: true, referrer: "direct" }),
          clickRow({ linkId: a, domainId, at: T0 + 30, referrer: "@evil.example", country: "FR" }),
          clickRow({ linkId: a, domainId, at: T0 - 5 }),
          clickRow({ linkId: a, domainId, at: T0 + 100 }),
          clickRow({ linkId: elsewhere, domainId: other, at: T0 + 15 })
        ]
        yield* writeClickRows(rows)
        const window = `from_unix=${T0}&to_unix=${T0 + 100}`

        const reply = yield* get(`/api/v4/${domainId}/export/clicks.csv?${window}`, admin)
        expectCsv(reply, `clicks-domain-${domainId}-${T0}-${T0 + 100}.csv`)
        const { header, rows: exported } = table(reply.text)
        expect(header).toEqual([
          "engagement_id", "clicked_at", "unix", "link_id", "alias", "country", "region", "city", "device", "referrer", "user_agent", "qr", "bot"
        ])
        expect(exported).toEqual([
          {
            engagement_id: rows[0]!.id, clicked_at: utc(T0 + 10), unix: String(T0 + 10), link_id: String(a), alias: "a",
            country: "DE", region: "Berlin", city: "Berlin", device: "mobile", referrer: "news.example", user_agent: "test", qr: "true", bot: "false"
          },
          {
            engagement_id: rows[1]!.id, clicked_at: utc(T0 + 20), unix: String(T0 + 20), link_id: String(b), alias: "b",
            country: "", region: "", city: "", device: "bot", referrer: "direct", user_agent: "test", qr: "false", bot: "true"
          },
          {
            engagement_id: rows[2]!.id, clicked_at: utc(T0 + 30), unix: String(T0 + 30), link_id: String(a), alias: "a",
            country: "FR", region: "", city: "", device: "desktop", referrer: "'@evil.example", user_agent: "test", qr: "false", bot: "false"
          }
        ])
        for (const row of rows) expect(reply.text).not.toContain(row.ip_hash)
        expect(reply.text).not.toContain("198.51.100.7")

        const one = yield* get(`/api/v4/${domainId}/export/clicks.csv?${window}&link_id=${a}`, admin)
        expectCsv(one, `clicks-domain-${domainId}-${T0}-${T0 + 100}.csv`)
        expect(table(one.text).rows.map((row) => row.engagement_id)).toEqual([rows[0]!.id, rows[2]!.id])
        // R1 shows the same clicks of the link, newest first, and those outside the window.
        const raw = yield* get(`/api/v4/${domainId}/links/${a}/rawclicks`, admin)
        const recorded = (at(raw.body, "objects") as ReadonlyArray<unknown>).map((click) => at(click, "engagement_id"))
        expect(recorded).toEqual([rows[4]!.id, rows[2]!.id, rows[0]!.id, rows[3]!.id])

        const empty = yield* get(`/api/v4/${domainId}/export/clicks.csv?from_unix=${T0 + 40}&to_unix=${T0 + 50}`, admin)
        expect(empty.text).toBe(`${header.join(",")}\r\n`)
        expect((yield* get(`/api/v3/${domainId}/export/clicks.csv?${window}`, admin)).text).toBe(reply.text)
      })
    )

    it.effect("an export of many chunks (12,000 clicks, 120 a second) is complete and in order, and the CLI writes the same bytes", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const domainId = yield* newDomain(admin)
        const linkIds = [yield* newLink(admin, domainId), yield* newLink(admin, domainId), yield* newLink(admin, domainId)]
        yield* writeClickRows(Array.from({ length: 12_000 }, (_, n) => clickRow({ linkId: linkIds[n % 3]!, domainId, at: T0 + (n % 100) })))
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ id: string }>`SELECT id::text AS id FROM clicks WHERE domain_id = ${domainId} ORDER BY at, id`

        const window = `from_unix=${T0}&to_unix=${T0 + 3600}`
        const reply = yield* get(`/api/v4/${domainId}/export/clicks.csv?${window}`, admin)
        expect(reply.status).toBe(200)
        const { rows } = table(reply.text)
        expect(rows.length).toBe(12_000)
        expect(rows.map((row) => row.engagement_id)).toEqual(stored.map((row) => row.id))
        for (let n = 1; n < rows.length; n++) {
          const [before, after] = [rows[n - 1]!, rows[n]!]
          const ordered = Number(before.unix) < Number(after.unix) || (before.unix === after.unix && before.engagement_id < after.engagement_id)
          if (!ordered) expect.fail(`rows ${n - 1} and ${n} out of order: ${JSON.stringify([before, after])}`)
        }

        const run = yield* cli(["export", "clicks", "--domain", String(domainId), "--from", String(T0), "--to", String(T0 + 3600)])
        expect(run.code, run.stderr).toBe(0)
        expect(run.stdout).toBe(reply.text)
      })
    )

    it.effect("the CLI: links and clicks to a file or standard output, the endpoint's bytes; refusals with their codes", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const domainId = yield* newDomain(admin)
        const other = yield* newDomain(admin)
        const link = yield* newLink(admin, domainId, { notes: '=1+1, "x"\n' })
        const foreign = yield* newLink(admin, other)
        yield* writeClicks([{ linkId: link, domainId, at: T0 + 5, referrer: "-x.example" }])

        const links = yield* get(`/api/v4/${domainId}/export/links.csv`, admin)
        const toStdout = yield* cli(["export", "links", "--domain", String(domainId)])
        expect(toStdout.code, toStdout.stderr).toBe(0)
        expect(toStdout.stdout).toBe(links.text)

        const clicks = yield* get(`/api/v4/${domainId}/export/clicks.csv?from_unix=${T0}&to_unix=${T0 + 60}`, admin)
        const file = join(dataDir, `clicks-${domainId}.csv`)
        const args = ["export", "clicks", "--domain", String(domainId), "--from", String(T0), "--to", String(T0 + 60)]
        const written = yield* cli([...args, "--output", file, "--json"])
        expect(written.code, written.stderr).toBe(0)
        expect(JSON.parse(written.stdout)).toEqual({ file, bytes: Buffer.byteLength(clicks.text) })
        expect(readFileSync(file, "utf8")).toBe(clicks.text)
        expect(existsSync(`${file}.partial`)).toBe(false)
        expect(table(clicks.text).rows.map((row) => row.referrer)).toEqual(["'-x.example"])

        const refusals: ReadonlyArray<readonly [ReadonlyArray<string>, number, string]> = [
          [["export", "clicks", "--domain", String(domainId), "--from", String(T0), "--to", String(T0)], 1, "10833 to_unix must be after from_unix"],
          [["export", "clicks", "--domain", String(domainId), "--from", "0", "--to", "31622401"], 1, "10834 the window must not exceed one year"],
          [[...args, "--link", String(foreign)], 1, "10150 link not found"],
          [["export", "links", "--domain", "999999999"], 1, "there is no domain 999999999"],
          [["export", "clicks", "--domain", String(domainId), "--from", String(T0)], 2, "export clicks needs --to"],
          [["export", "clicks", "--domain", String(domainId), "--from=-1", "--to", "5"], 2, "--from must be a Unix time in seconds"],
          [["export", "links", "--domain", String(domainId), "--json"], 2, "export links --json needs --output"],
          [["export", "links", "--domain", String(domainId), "--output", join(dataDir, "no", "such", "dir.csv")], 1, "cannot write"]
        ]
        for (const [refusedArgs, code, message] of refusals) {
          const run = yield* cli(refusedArgs)
          expect(run.code, `${refusedArgs.join(" ")}: ${run.stderr}`).toBe(code)
          expect(run.stderr).toContain(message)
          if (refusedArgs.includes("--json")) expect(at(JSON.parse(run.stdout), "error")).toContain(message)
          else expect(run.stdout).toBe("")
        }
      })
    )

    it.effect("who may export: account admins and admins of the domain; clicks need analytics; bad input gets its codes", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const domainAdmin = yield* newUser({ accountId: admin.accountId, role: "member" })
        const stranger = yield* newUser()
        const free = yield* newUser({ plan: "free" })
        const domainId = yield* newDomain(admin)
        const other = yield* newDomain(admin)
        const foreign = yield* newLink(admin, other)
        const freeDomain = yield* newDomain(free)
        yield* Effect.flatMap(Accounts, (accounts) => accounts.makeDomainAdmin(domainAdmin.userId, domainId))
        const links = `/api/v4/${domainId}/export/links.csv`
        const clicks = `/api/v4/${domainId}/export/clicks.csv`
        const window = `from_unix=${T0}&to_unix=${T0 + 60}`

        expect((yield* get(links, domainAdmin)).status).toBe(200)
        expect((yield* get(`${clicks}?${window}`, domainAdmin)).status).toBe(200)
        expectError(yield* get(links, member), 403, [10003])
        expectError(yield* get(`${clicks}?${window}`, member), 403, [10003])
        expectError(yield* get(links, stranger), 404, [10101])
        expectError(yield* get(`${clicks}?${window}`, stranger), 404, [10101])
        expectError(yield* get(`/api/v4/999999999/export/links.csv`, admin), 404, [10101])
        expectError(yield* call("GET", links), 401, [10000])
        // Links on every plan; clicks only with analytics, checked first.
        expect((yield* get(`/api/v4/${freeDomain}/export/links.csv`, free)).status).toBe(200)
        expectError(yield* get(`/api/v4/${freeDomain}/export/clicks.csv?${window}`, free), 403, [10504])
        expectError(yield* get(`/api/v4/${domainId}/export/clicks.csv?${window}`, free), 403, [10504])

        expectError(yield* get(clicks, admin), 400, [10832])
        expectError(yield* get(`${clicks}?from_unix=${T0}`, admin), 400, [10832])
        expectError(yield* get(`${clicks}?to_unix=${T0}`, admin), 400, [10832])
        expectError(yield* get(`${clicks}?from_unix=${T0}&to_unix=${T0}`, admin), 400, [10833])
        expectError(yield* get(`${clicks}?from_unix=${T0}&to_unix=${T0 - 1}`, admin), 400, [10833])
        expectError(yield* get(`${clicks}?from_unix=${T0}&to_unix=${T0 + 367 * 86_400}`, admin), 400, [10834])
        expectError(yield* get(`${clicks}?from_unix=abc&to_unix=1.5`, admin), 400, [10830, 10831])
        expectError(yield* get(`${clicks}?from_unix=-1&to_unix=253402300800`, admin), 400, [10830, 10831])
        expectError(yield* get(`${clicks}?${window}&link_id=x`, admin), 400, [10835])
        expectError(yield* get(`${clicks}?${window}&link_id=0`, admin), 400, [10835])
        expectError(yield* get(`${clicks}?${window}&link_id=${foreign}`, admin), 404, [10150])
        const message = yield* get(`${clicks}?from_unix=${T0}&to_unix=${T0}`, admin)
        expect(message.body).toEqual({ errors: [{ code: 10833, message: "to_unix must be after from_unix" }] })
      })
    )
  })
})

// A statement waiting for a lock another session holds, then cancelled, is a database failure in the
// middle of an export, made deterministic; the embedded database has one connection, so this needs PostgreSQL.
describeUnless(withoutServer("the export's statement is made to fail from another session"), "an export failing after its answer began (PostgreSQL)", () => {
  layer(TestServer({}, LogLevel.None), { excludeTestServices: true })((it) => {
    it.effect("cuts the connection: the client sees an incomplete transfer, never a file that ends cleanly", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const domainId = yield* newDomain(admin)
        const link = yield* newLink(admin, domainId)
        yield* writeClicks([{ linkId: link, domainId, at: T0 }])
        const base = yield* BaseUrl
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* holdLocks("user_agents")
            const response = yield* Effect.promise(() =>
              fetch(`${base}/api/v4/${domainId}/export/clicks.csv?from_unix=${T0}&to_unix=${T0 + 60}`, { headers: { authorization: `Bearer ${admin.token}` } })
            )
            expect(response.status).toBe(200)
            const reader = response.body!.getReader()
            const first = yield* Effect.promise(() => reader.read())
            expect(new TextDecoder().decode(first.value)).toMatch(/^engagement_id,/)
            expect(yield* within(10_000, Effect.map(waitingOnLocks, (n) => n > 0))).toBeLessThan(10_000)
            const sql = yield* SqlClient.SqlClient
            yield* sql`SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`
            const rest = yield* Effect.promise(async () => {
              try {
                for (;;) if ((await reader.read()).done) return "ended cleanly"
              } catch (error) {
                return `failed: ${String(error)}`
              }
            })
            expect(rest).toMatch(/^failed: /)
          })
        )
      })
    )
  })
})
