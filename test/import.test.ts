/**
 * `cli import` as an operator runs it: the bundled CLI in a child process over a fresh database,
 * fed files written as each source's export looks (README "Admin CLI", docs/decisions/0017-import.md).
 */
import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { execFile, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { embeddedClientLayer, serverClientLayer } from "../src/Sql/Database.ts"
import { createServerDatabase, dropServerDatabase, testServerUrl } from "./support/TestDatabase.ts"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), "links-import-"))
const files = mkdtempSync(join(tmpdir(), "links-import-files-"))
const bundleDir = mkdtempSync(join(ROOT, ".vitest-import-"))
let databaseUrl: string | undefined
let databaseName: string | undefined

beforeAll(async () => {
  execFileSync(process.execPath, ["scripts/bundle-cli.mjs", bundleDir], { cwd: ROOT })
  if (testServerUrl !== undefined) {
    const created = await createServerDatabase(testServerUrl, "links_import_test")
    databaseName = created.name
    databaseUrl = created.url
  }
  execFileSync(process.execPath, [join(bundleDir, "Cli", "main.js"), "migrate"], { cwd: ROOT, env: childEnv() })
})

afterAll(async () => {
  if (testServerUrl !== undefined && databaseName !== undefined) await dropServerDatabase(testServerUrl, databaseName)
  for (const dir of [dataDir, files, bundleDir]) rmSync(dir, { recursive: true, force: true })
})

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value
  for (const name of ["DATABASE_URL", "TEST_DATABASE_URL", "REDIS_URL"]) delete env[name]
  env["DATA_DIR"] = dataDir
  if (databaseUrl !== undefined) env["DATABASE_URL"] = databaseUrl
  return env
}

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const cli = (...args: ReadonlyArray<string>) =>
  Effect.async<Run>((resume) => {
    const child = execFile(process.execPath, [join(bundleDir, "Cli", "main.js"), ...args], { cwd: ROOT, env: childEnv(), timeout: 90_000 }, (error, stdout, stderr) => {
      resume(Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }))
    })
    return Effect.sync(() => child.kill())
  })

const lines = (stdout: string) =>
  stdout
    .trimEnd()
    .split("\n")
    .map((line): Record<string, unknown> => JSON.parse(line))

/** `import --json` that must succeed: its JSON lines (every one parses), the summary last. */
const imported = (...args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const run = yield* cli("import", ...args, "--json")
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    const events = lines(run.stdout)
    const summary = events.at(-1)
    expect(summary?.["event"]).toBe("summary")
    return { events, summary: summary ?? {} }
  })

const fileOf = (name: string, content: string | Buffer) => {
  const path = join(files, `${randomBytes(4).toString("hex")}-${name}`)
  writeFileSync(path, content)
  return path
}

const withDatabase = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.suspend(() =>
    Effect.provide(
      effect,
      databaseUrl === undefined
        ? embeddedClientLayer(dataDir)
        : serverClientLayer(Redacted.make(databaseUrl), { maxConnections: 1, applicationName: "links-import-test" })
    )
  ).pipe(Effect.orDie)

/** A new account with its admin and one active domain. */
const newDomain = withDatabase(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const suffix = randomBytes(4).toString("hex")
    const [account] = yield* sql<{ id: number }>`INSERT INTO accounts (name, plan) VALUES (${`import ${suffix}`}, 'team') RETURNING id`
    const [user] = yield* sql<{ id: number }>`
      INSERT INTO users (account_id, email, nickname, role, password_hash, refresh_token_hash)
      VALUES (${account!.id}, ${`import-${suffix}@example.com`}, 'importer', 'account_admin', 'x', decode(md5(${suffix}), 'hex'))
      RETURNING id`
    const [domain] = yield* sql<{ id: number }>`
      INSERT INTO domains (account_id, domain) VALUES (${account!.id}, ${`import-${suffix}.example`}) RETURNING id`
    return { accountId: account!.id, domainId: domain!.id, userId: user!.id }
  })
)

const setQuota = (accountId: number, quota: number) =>
  withDatabase(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE accounts SET link_quota = ${quota} WHERE id = ${accountId}`))

interface StoredLink {
  readonly alias: string
  readonly url: string
  readonly notes: string
  readonly click_count: number
  readonly created: number
  readonly user_id: number
  readonly tags: ReadonlyArray<string>
}

const linksOf = (domainId: number) =>
  withDatabase(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<StoredLink>`
        SELECT l.alias, l.url, l.notes, l.click_count, floor(extract(epoch FROM l.created))::int8 AS created, l.user_id,
               coalesce((SELECT json_agg(t.name ORDER BY lower(t.name)) FROM link_tags lt JOIN tags t ON t.id = lt.tag_id WHERE lt.link_id = l.id), '[]') AS tags
        FROM links l WHERE l.domain_id = ${domainId} ORDER BY l.id`
    )
  )

const byAlias = (links: ReadonlyArray<StoredLink>) => new Map(links.map((link) => [link.alias, link]))

const at = (iso: string) => Date.parse(iso) / 1000

const OWN_CSV = [
  "alias,url,title,notes,tags,created,clicks",
  'spring,https://example.com/spring,"Spring sale","mail, then ""social""",promo|Season,2024-03-01T10:00:00Z,42',
  ',example.com/no-alias,,,promo,,',
  'bad-url,ftp://example.com/x,,,,,',
  '"has space",https://example.com/s,,,,,',
  'dated,https://example.com/d,,,,not-a-date,',
  '"multi",https://example.com/m,"two',
  'lines",,,1700000000,7'
].join("\n")

describe("cli import", () => {
  it.effect("imports our own CSV: aliases, URLs, titles and notes, tags, creation dates and clicks; invalid rows named by line", () =>
    Effect.gen(function* () {
      const { domainId, userId } = yield* newDomain
      const { events, summary } = yield* imported("--from", "csv", fileOf("own.csv", OWN_CSV), "--domain", String(domainId))
      expect(summary).toEqual(
        expect.objectContaining({ rows: 6, done: 6, imported: 3, conflicts: 0, invalid: 3, skipped: 0, domain_id: domainId, user_id: userId, dry_run: false })
      )
      expect(events.filter((event) => event["event"] === "invalid")).toEqual([
        { event: "invalid", line: 4, reason: "the long URL is not a full http(s) URL with a valid host" },
        { event: "invalid", line: 5, reason: "the alias may hold only letters, digits, '.', '_' and '-'" },
        { event: "invalid", line: 6, reason: 'the creation date "not-a-date" is not a date' }
      ])
      const links = yield* linksOf(domainId)
      expect(links).toHaveLength(3)
      const found = byAlias(links)
      expect(found.get("spring")).toEqual({
        alias: "spring",
        url: "https://example.com/spring",
        notes: 'Spring sale\nmail, then "social"',
        click_count: 42,
        created: at("2024-03-01T10:00:00Z"),
        user_id: userId,
        tags: ["promo", "Season"]
      })
      expect(found.get("multi")).toEqual(expect.objectContaining({ notes: "two\nlines", created: 1_700_000_000, click_count: 7, tags: [] }))
      const generated = links.find((link) => link.url === "http://example.com/no-alias")
      expect(generated?.alias).toMatch(/^[2-9A-HJ-NP-Za-km-z]{6}$/)
      // The tag is reused, not made twice.
      expect(generated?.tags).toEqual(["promo"])
      expect(Math.abs((generated?.created ?? 0) - Date.now() / 1000)).toBeLessThan(120)
    })
  )

  it.effect("our own links export imports as it is: its extra columns left unread, tags one a line, the formula guard dropped", () =>
    Effect.gen(function* () {
      const source = yield* newDomain
      const target = yield* newDomain
      const links = [
        "alias,url,notes,tags,created,clicks",
        'sum,https://example.com/sum,"=1+2, as typed",-draft|promo,2024-03-01T10:00:00Z,5',
        "plain,https://example.com/plain,@someone,promo,1700000000,0"
      ].join("\n")
      yield* imported("--from", "csv", fileOf("source.csv", links), "--domain", String(source.domainId))
      const exported = join(files, `${randomBytes(4).toString("hex")}-export.csv`)
      const run = yield* cli("export", "links", "--domain", String(source.domainId), "--output", exported)
      expect(run.stderr).toBe("")
      const again = yield* imported("--from", "csv", exported, "--domain", String(target.domainId))
      expect(again.summary).toEqual(expect.objectContaining({ imported: 2, invalid: 0, conflicts: 0 }))
      const strip = (link: StoredLink) => ({ ...link, user_id: 0 })
      expect((yield* linksOf(target.domainId)).map(strip)).toEqual((yield* linksOf(source.domainId)).map(strip))
      expect(byAlias(yield* linksOf(target.domainId)).get("sum")).toEqual(
        expect.objectContaining({ notes: "=1+2, as typed", tags: ["-draft", "promo"], click_count: 5, created: at("2024-03-01T10:00:00Z") })
      )
    })
  )

  it.effect("a dry run writes nothing and reports the counts the import then has; conflicts are listed and left as they are", () =>
    Effect.gen(function* () {
      const { domainId } = yield* newDomain
      const first = fileOf("first.csv", "alias,url\ntaken,https://example.com/original\n")
      yield* imported("--from", "csv", first, "--domain", String(domainId))
      const file = fileOf("second.csv", "alias,url,tags\nfresh,https://example.com/fresh,new-tag\nTAKEN,https://example.com/other,\nfresh,https://example.com/again,\n,https://example.com/gen,\n")
      const dry = yield* imported("--from", "csv", file, "--domain", String(domainId), "--dry-run")
      expect(yield* linksOf(domainId)).toHaveLength(1)
      const wet = yield* imported("--from", "csv", file, "--domain", String(domainId))
      for (const run of [dry, wet]) {
        expect(run.summary).toEqual(expect.objectContaining({ rows: 4, imported: 2, conflicts: 2, invalid: 0 }))
        expect(run.events.filter((event) => event["event"] === "conflict")).toEqual([
          { event: "conflict", line: 3, alias: "TAKEN" },
          { event: "conflict", line: 4, alias: "fresh" }
        ])
      }
      expect(dry.summary["dry_run"]).toBe(true)
      const links = byAlias(yield* linksOf(domainId))
      expect(links.size).toBe(3)
      expect(links.get("taken")?.url).toBe("https://example.com/original")
      expect(links.get("fresh")?.url).toBe("https://example.com/fresh")
      // The same file again: already done, nothing written twice (not even the generated alias).
      const again = yield* imported("--from", "csv", file, "--domain", String(domainId))
      expect(again.summary).toEqual(expect.objectContaining({ imported: 0, skipped: 4, finished_before: expect.any(Number) }))
      expect(yield* linksOf(domainId)).toHaveLength(3)
    })
  )

  it.effect("reads Shlink's, YOURLS's, Kutt's and Bitly's exports as those tools write them", () =>
    Effect.gen(function* () {
      const { domainId } = yield* newDomain
      const shlinkWeb = [
        "createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits",
        '2023-06-01T12:00:00+02:00,s.test,sh1,https://s.test/sh1,https://shlink.example/1,"Shlink, one",a|b,15',
        "2023-06-02T12:00:00+00:00,s.test,sh2,https://s.test/sh2,https://shlink.example/2,,,0"
      ].join("\r\n")
      const shlinkImporter = 'Long URL,Short code,Domain,Title,Tags\nhttps://shlink.example/3,sh3,,Three,c\n'
      const yourlsTable = 'keyword,url,title,timestamp,ip,clicks\nyo1,https://yourls.example/1,"Yo ""one""",2015-01-02 03:04:05,127.0.0.1,8\n'
      const yourlsPhpMyAdmin = '"yo2","https://yourls.example/2",NULL,"2016-01-02 03:04:05","10.0.0.1","0"\n'
      const yourlsApi = JSON.stringify({
        links: { link_1: { shorturl: "https://y.test/yo3", url: "https://yourls.example/3", title: "Three", timestamp: "2017-01-02 03:04:05", ip: "::1", clicks: "4" } },
        stats: { total_links: "1", total_clicks: "4" },
        statusCode: 200,
        message: "success"
      })
      const kutt = JSON.stringify({
        limit: 50,
        skip: 0,
        total: 1,
        data: [{ id: "8b9e1a3c-0000-4000-8000-000000000000", address: "ku1", banned: false, created_at: "2024-02-03T04:05:06.000Z", updated_at: "2024-02-03T04:05:06.000Z", description: "Kutt one", expire_in: null, password: false, target: "https://kutt.example/1", visit_count: 21, domain: null, link: "https://kutt.it/ku1" }]
      })
      const bitly = JSON.stringify({
        links: [{ created_at: "2020-04-01T12:00:00+0000", id: "bit.ly/3bT1", link: "https://bit.ly/3bT1", custom_bitlinks: [], long_url: "https://bitly.example/1", title: "Bitly one", archived: false, tags: ["bt"], deeplinks: [], references: { group: "https://api-ssl.bitly.com/v4/groups/Ba1" } }],
        pagination: { prev: "", next: "", size: 50, page: 1, total: 1 }
      })
      const sources: ReadonlyArray<readonly [string, string, number]> = [
        ["shlink", shlinkWeb, 2],
        ["shlink", shlinkImporter, 1],
        ["yourls", yourlsTable, 1],
        ["yourls", yourlsPhpMyAdmin, 1],
        ["yourls", yourlsApi, 1],
        ["kutt", kutt, 1],
        ["bitly", bitly, 1]
      ]
      for (const [source, content, count] of sources) {
        const { summary } = yield* imported("--from", source, fileOf(`${source}.export`, content), "--domain", String(domainId))
        expect(summary, `${source}: ${content.slice(0, 40)}`).toEqual(expect.objectContaining({ rows: count, imported: count, invalid: 0, conflicts: 0 }))
      }
      const links = byAlias(yield* linksOf(domainId))
      expect(links.get("sh1")).toEqual(expect.objectContaining({ url: "https://shlink.example/1", notes: "Shlink, one", tags: ["a", "b"], click_count: 15, created: at("2023-06-01T10:00:00Z") }))
      expect(links.get("sh3")).toEqual(expect.objectContaining({ notes: "Three", tags: ["c"] }))
      expect(links.get("yo1")).toEqual(expect.objectContaining({ url: "https://yourls.example/1", notes: 'Yo "one"', click_count: 8, created: at("2015-01-02T03:04:05Z") }))
      expect(links.get("yo2")).toEqual(expect.objectContaining({ notes: "", click_count: 0, created: at("2016-01-02T03:04:05Z") }))
      expect(links.get("yo3")).toEqual(expect.objectContaining({ url: "https://yourls.example/3", click_count: 4 }))
      expect(links.get("ku1")).toEqual(expect.objectContaining({ url: "https://kutt.example/1", notes: "Kutt one", click_count: 21, created: at("2024-02-03T04:05:06Z") }))
      expect(links.get("3bT1")).toEqual(expect.objectContaining({ url: "https://bitly.example/1", notes: "Bitly one", tags: ["bt"], created: at("2020-04-01T12:00:00Z") }))
    })
  )

  it.effect("refuses a malformed file as a whole, naming the line, and writes nothing", () =>
    Effect.gen(function* () {
      const { domainId } = yield* newDomain
      const refusals: ReadonlyArray<readonly [string, string | Buffer, RegExp]> = [
        ["csv", 'alias,url\nok,https://example.com/\nbad,"https://example.com/"x\n', /^error: line 3: text after the closing quote/],
        ["csv", 'alias,url\nok,https://example.com/\n"open,https://example.com/\n', /^error: line 3: a quoted field is never closed/],
        ["csv", "alias,link\nok,https://example.com/\n", /^error: line 1: unknown column "link"/],
        ["csv", "", /^error: the file is empty/],
        ["shlink", "shortCode,url\nok,https://example.com/\n", /^error: line 1: a Shlink export needs a "longUrl"/],
        ["csv", Buffer.concat([Buffer.from("alias,url\nok,https://example.com/\n"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe])]), /^error: line 3: .*(not UTF-8|NUL)/],
        ["kutt", '{"data": [', /^error: the file is not valid JSON/],
        ["bitly", '{"data": []}', /^error: the JSON has no "links" list/]
      ]
      for (const [source, content, message] of refusals) {
        const run = yield* cli("import", "--from", source, fileOf("bad", content), "--domain", String(domainId))
        expect(run.code, `${source}: ${run.stderr}`).toBe(1)
        expect(run.stderr).toMatch(message)
      }
      const missing = yield* cli("import", "--from", "csv", join(files, "absent.csv"), "--domain", String(domainId))
      expect(missing.code).toBe(1)
      expect(missing.stderr).toMatch(/is not a readable file/)
      const usage = yield* cli("import", "--from", "tinyurl", "x.csv", "--domain", String(domainId))
      expect(usage.code).toBe(2)
      expect(usage.stderr).toMatch(/--from must be one of csv, shlink, yourls, kutt, bitly/)
      expect(yield* linksOf(domainId)).toHaveLength(0)
      // A row with fewer fields than the header is one invalid row, not a broken file.
      const short = yield* imported("--from", "csv", fileOf("short.csv", "alias,url,title\nok,https://example.com/,T\nshort\n"), "--domain", String(domainId))
      expect(short.events).toContainEqual({ event: "invalid", line: 3, reason: "1 field(s) where the header has 3" })
      expect(short.summary).toEqual(expect.objectContaining({ imported: 1, invalid: 1 }))
    })
  )

  it.effect("owns the links by --user of the domain's account, stops at the account's quota and continues once it allows; text output", () =>
    Effect.gen(function* () {
      const { accountId, domainId, userId } = yield* newDomain
      const other = yield* newDomain
      const file = fileOf("quota.csv", ["alias,url", ...[1, 2, 3, 4, 5, 1].map((n) => `q${n},https://example.com/q${n}`)].join("\n"))
      const stranger = yield* cli("import", "--from", "csv", file, "--domain", String(domainId), "--user", String(other.userId))
      expect(stranger.code).toBe(1)
      expect(stranger.stderr).toBe(`error: user ${other.userId} is not a user of the account of domain ${domainId}\n`)
      yield* setQuota(accountId, 3)
      const stopped = yield* cli("import", "--from", "csv", file, "--domain", String(domainId), "--user", String(userId), "--batch-size", "2")
      expect(stopped.code).toBe(1)
      expect(stopped.stdout).toBe("")
      expect(stopped.stderr).toBe("error: the account's link quota (3) would be passed: it has 2 links and the next batch holds 2\n")
      expect(yield* linksOf(domainId)).toHaveLength(2)
      yield* setQuota(accountId, 10)
      const resumed = yield* cli("import", "--from", "csv", file, "--domain", String(domainId), "--batch-size", "2")
      expect(resumed.code).toBe(0)
      expect(resumed.stderr).toBe("")
      expect(resumed.stdout).toBe(
        'line 7: conflict: the alias "q1" is taken on the domain (left as it is)\n' +
          `imported 6 rows from csv (into domain ${domainId} as user ${userId}): 3 imported, 1 conflicts, 0 invalid, 2 skipped\n`
      )
      const links = yield* linksOf(domainId)
      expect(links.map((link) => link.alias)).toEqual(["q1", "q2", "q3", "q4", "q5"])
      expect(links.every((link) => link.user_id === userId)).toBe(true)
    })
  )

  it.effect("continues after Ctrl-C or a killed run where it stopped, each link imported exactly once", () =>
    Effect.gen(function* () {
      const { domainId } = yield* newDomain
      const total = 20_000
      const rows = Array.from({ length: total }, (_, n) => (n % 2 === 0 ? `r${n},https://example.com/${n},t${n % 7}` : `,https://example.com/${n},`))
      const file = fileOf("big.csv", ["alias,url,tags", ...rows].join("\n"))
      /** A run stopped by `signal` once 3 more batches than the links stored are committed: its exit code and output. */
      const stoppedBy = (signal: NodeJS.Signals) =>
        Effect.async<{ readonly code: number | null; readonly out: string }>((resume) => {
          const child = spawn(process.execPath, [join(bundleDir, "Cli", "main.js"), "import", "--from", "csv", file, "--domain", String(domainId), "--batch-size", "100", "--json"], {
            cwd: ROOT,
            env: childEnv()
          })
          let out = ""
          child.stdout.on("data", (chunk: Buffer) => {
            out += chunk.toString()
            if (out.split("\n").filter((line) => line.includes('"progress"')).length === 3) child.kill(signal)
          })
          child.on("close", (code) => resume(Effect.succeed({ code, out })))
        })
      // Ctrl-C: the batch in flight is rolled back, the process ends with 130.
      const interrupted = yield* stoppedBy("SIGINT")
      expect(interrupted.code).toBe(130)
      expect(interrupted.out).not.toMatch(/"summary"/)
      const first = (yield* linksOf(domainId)).length
      expect(first).toBeGreaterThanOrEqual(300)
      // A crash (SIGKILL) of the run that continues.
      const killed = yield* stoppedBy("SIGKILL")
      expect(killed.out).not.toMatch(/"summary"/)
      expect(lines(killed.out)[0]).toEqual(expect.objectContaining({ event: "progress", skipped: first }))
      const committed = (yield* linksOf(domainId)).length
      expect(committed).toBeGreaterThanOrEqual(first + 300)
      expect(committed).toBeLessThan(total)
      const { summary } = yield* imported("--from", "csv", file, "--domain", String(domainId))
      expect(summary["skipped"]).toBe(committed)
      expect(Number(summary["skipped"]) + Number(summary["imported"])).toBe(total)
      const links = yield* linksOf(domainId)
      expect(links).toHaveLength(total)
      expect(new Set(links.map((link) => link.url)).size).toBe(total)
      expect(links.find((link) => link.alias === "r2")?.tags).toEqual(["t2"])
    })
  )
})
