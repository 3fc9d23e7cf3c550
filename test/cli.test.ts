import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { verify } from "@node-rs/argon2"
import { Context, Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { execFile, execFileSync, spawn, spawnSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { coreLayer, httpLayer } from "../src/App.ts"
import { Shutdown } from "../src/Platform/Shutdown.ts"
import { parseInvocation } from "../src/Cli/Arguments.ts"
import { Command } from "../src/Cli/Command.ts"
import { HELP } from "../src/Cli/Usage.ts"
import { AppConfig } from "../src/Config.ts"
import { UtmTemplateRepo } from "../src/Tags/UtmTemplateRepo.ts"
import { embeddedClientLayer, serverClientLayer } from "../src/Sql/Database.ts"
import { loadMigrations } from "../src/Sql/Migrator.ts"
import { at, call, codes, numberAt, stringAt, within } from "./support/Http.ts"
import { BaseUrl } from "./support/TestServer.ts"
import { createServerDatabase, dropServerDatabase, testServerUrl } from "./support/TestDatabase.ts"
import { describeUnless, withoutServer } from "./support/SkipReasons.ts"

const SOURCE = { label: "Source", field_code: "utm_source", type: "text", required: true }
const MEDIUM = { label: "Medium", field_code: "utm_medium", type: "text", required: false }

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const PASSWORD = "correct horse battery staple"

const dataDir = mkdtempSync(join(tmpdir(), "links-cli-"))
const scratch: Array<string> = [dataDir]
/** The fresh database of this file on the PostgreSQL server; undefined when the CLI runs embedded. */
let databaseUrl: string | undefined
let databaseName: string | undefined

/** The CLI as `npm run build` bundles it, in a folder of this run (child processes run what ships). */
const bundleDir = mkdtempSync(join(ROOT, ".vitest-cli-"))
scratch.push(bundleDir)

beforeAll(async () => {
  execFileSync(process.execPath, ["scripts/bundle-cli.mjs", bundleDir], { cwd: ROOT })
  if (testServerUrl === undefined) return
  const created = await createServerDatabase(testServerUrl, "links_cli_test")
  databaseName = created.name
  databaseUrl = created.url
})

afterAll(async () => {
  if (testServerUrl !== undefined && databaseName !== undefined) await dropServerDatabase(testServerUrl, databaseName)
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** The real CLI in a child process, on this file's database unless `env` says otherwise (undefined: unset). */
const cli = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}, input?: string) =>
  Effect.async<Run>((resume) => {
    const childEnv: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "info" }
    for (const name of ["DATABASE_URL", "TEST_DATABASE_URL", "REDIS_URL", "TOKEN_SECRET"]) delete childEnv[name]
    if (databaseUrl !== undefined) childEnv["DATABASE_URL"] = databaseUrl
    Object.assign(childEnv, env)
    for (const [name, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[name]
    const child = execFile(
      process.execPath,
      [join(bundleDir, "Cli", "main.js"), ...args],
      { cwd: ROOT, env: childEnv, timeout: 90_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ code, stdout, stderr }))
      }
    )
    child.stdin?.end(input)
    return Effect.sync(() => child.kill())
  })

const parse = (text: string): unknown => JSON.parse(text)

/** A `--json` run that must succeed: exactly one JSON object on stdout, nothing on stderr. */
const json = (...args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const run = yield* cli([...args, "--json"])
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(run.stdout.endsWith("\n")).toBe(true)
    expect(run.stdout.trimEnd().split("\n")).toHaveLength(1)
    return parse(run.stdout)
  })

/** A run that must be refused with `code` and exactly one line on stderr matching `message`. */
const refused = (args: ReadonlyArray<string>, code: number, message: RegExp) =>
  Effect.gen(function* () {
    const run = yield* cli(args)
    expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(code)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(/^error: [^\n]+\n$/)
    expect(run.stderr).toMatch(message)
    return run
  })

/** This file's database opened in the test process (embedded: only while no CLI runs). */
const database = () =>
  databaseUrl === undefined
    ? embeddedClientLayer(dataDir)
    : serverClientLayer(Redacted.make(databaseUrl), { maxConnections: 2, applicationName: "links-cli-test" })

const withDatabase = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.suspend(() => Effect.provide(effect, database()))

let counter = 0
const uniqueEmail = (name: string) => `${name}.${++counter}.${randomBytes(3).toString("hex")}@example.com`

/** Two accounts with one domain each, written straight into the database. */
const fixture = Effect.cached(
  withDatabase(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const account = (name: string) =>
        Effect.map(sql<{ id: number }>`INSERT INTO accounts (name, plan) VALUES (${name}, 'team') RETURNING id`, (rows) => rows[0]!.id)
      const domain = (accountId: number, name: string) =>
        Effect.map(
          sql<{ id: number }>`INSERT INTO domains (account_id, domain) VALUES (${accountId}, ${name}) RETURNING id`,
          (rows) => rows[0]!.id
        )
      const accountA = yield* account("fixture A")
      const accountB = yield* account("fixture B")
      const suffix = randomBytes(3).toString("hex")
      return {
        accountA,
        accountB,
        domainA: yield* domain(accountA, `a-${suffix}.example`),
        domainB: yield* domain(accountB, `b-${suffix}.example`)
      }
    }).pipe(Effect.orDie)
  )
).pipe(Effect.runSync)

/** One more instance of the service over this file's database, on a free port, for the life of the scope; its base URL. */
const instance = Effect.gen(function* () {
  const layer = httpLayer({ port: 0, host: "127.0.0.1" }).pipe(
    Layer.provideMerge(Shutdown.layer),
    Layer.provideMerge(coreLayer(database())),
    Layer.provide(
      AppConfig.layerFromMap({
        DATA_DIR: mkdtempSync(join(tmpdir(), "links-cli-instance-")),
        TOKEN_SECRET: "the secret of every instance",
        RATE_LIMIT_PER_SECOND: "100000",
        RATE_LIMIT_PER_TOKEN_PER_SECOND: "100000"
      })
    ),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )
  const address = Context.get(yield* Layer.build(layer), HttpServer.HttpServer).address
  return `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`
})

/** The refusal of a command line, as the CLI reads it without running anything. */
const usageError = (...args: ReadonlyArray<string>) =>
  Effect.map(Effect.flip(parseInvocation(args).command), (error) => error.message)

describe("admin CLI command line", () => {
  it.effect("reads every command with its defaults", () =>
    Effect.gen(function* () {
      const given = { _tag: "Given", password: PASSWORD } as const
      const read = (...args: ReadonlyArray<string>) => parseInvocation(args).command
      expect(yield* read("account", "create", "--name", " Acme ", "--plan", "team")).toEqual(
        Command.AccountCreate({ name: "Acme", plan: "team", linkQuota: null })
      )
      expect(yield* read("--json", "user", "create", "--account=7", "--email", "a@example.com", "--password", PASSWORD)).toEqual(
        Command.UserCreate({ accountId: 7, email: "a@example.com", password: given, nickname: undefined, firstName: undefined, lastName: undefined, role: "member" })
      )
      expect(
        yield* read("user", "create", "--account", "7", "--email", "a@example.com", "--password", PASSWORD, "--first-name", " Ada ", "--last-name", "Lovelace")
      ).toEqual(
        Command.UserCreate({ accountId: 7, email: "a@example.com", password: given, nickname: undefined, firstName: "Ada", lastName: "Lovelace", role: "member" })
      )
      expect(yield* read("user", "disable", "--email", " a@example.com ")).toEqual(Command.UserDisable({ email: "a@example.com" }))
      expect(yield* read("user", "enable", "--email", "a@example.com")).toEqual(Command.UserEnable({ email: "a@example.com" }))
      expect(yield* read("user", "password", "--email", "a@example.com", "--password", PASSWORD)).toEqual(
        Command.UserPassword({ email: "a@example.com", password: given })
      )
      expect(yield* read("user", "password", "--email", "a@example.com", "--password-stdin")).toEqual(
        Command.UserPassword({ email: "a@example.com", password: { _tag: "Stdin" } })
      )
      expect(yield* read("user", "password", "--email", "a@example.com")).toEqual(
        Command.UserPassword({ email: "a@example.com", password: { _tag: "Prompt" } })
      )
      expect(yield* read("user", "list", "--account", "2", "--page", "3")).toEqual(Command.UserList({ accountId: 2, page: 3 }))
      expect(yield* read("domain", "list")).toEqual(Command.DomainList({ accountId: null, page: 1 }))
      expect(yield* read("link", "list", "--domain", "4")).toEqual(Command.LinkList({ domainId: 4, page: 1 }))
      expect(yield* read("user", "delete", "--email", "a@example.com")).toEqual(Command.UserDelete({ email: "a@example.com", reassignTo: undefined }))
      expect(yield* read("token-secret", "rotate")).toEqual(Command.TokenSecretRotate())
      expect(yield* read("account", "list", "--version")).toEqual(Command.Version())
      expect(yield* read("domain", "ssl", "--off", "--domain", "3")).toEqual(Command.DomainSsl({ domainId: 3, hasSsl: false }))
      expect(yield* read("utm-template", "create", "--domain", "3", "--name", "T", "--fields", JSON.stringify([SOURCE]))).toEqual(
        Command.UtmTemplateCreate({ domainId: 3, name: "T", fields: [SOURCE] })
      )
      expect(yield* read()).toEqual(Command.Help({ command: undefined }))
      expect(yield* read("user", "create", "--help")).toEqual(Command.Help({ command: "user create" }))
      expect(yield* read("frobnicate", "--help")).toEqual(Command.Help({ command: undefined }))
      // The entry answers `<command> --help` from the help texts alone: each names a command.
      for (const name of Object.keys(HELP)) expect(yield* read(...name.split(" "), "--help")).toEqual(Command.Help({ command: name }))
      expect(yield* read("user", "delete", "--email", "a@example.com", "--reassign-to", " 12 ")).toEqual(
        Command.UserDelete({ email: "a@example.com", reassignTo: { id: 12 } })
      )
      expect(yield* read("user", "delete", "--email", "a@example.com", "--reassign-to", "B@example.com")).toEqual(
        Command.UserDelete({ email: "a@example.com", reassignTo: { email: "B@example.com" } })
      )
      expect(parseInvocation(["migrate", "--json"]).json).toBe(true)
      expect(parseInvocation(["migrate", "--plan", "x", "--json"]).json).toBe(true)
    })
  )

  it.effect("export clicks takes --from and --to by the rule of the API's from_unix and to_unix", () =>
    Effect.gen(function* () {
      const window = (from: string) => parseInvocation(["export", "clicks", "--domain", "1", "--from", from, "--to", "253402300799"]).command
      for (const [from, read] of [["0", 0], ["1795420000", 1_795_420_000], ["253402300799", 253_402_300_799], ["1e3", 1000]] as const) {
        expect(yield* window(from), from).toEqual(Command.ExportClicks({ domainId: 1, from: read, to: 253_402_300_799, linkId: undefined, output: undefined }))
      }
      for (const from of ["253402300800", "-1", "1.5", "abc", "", "Infinity"]) {
        expect(yield* usageError("export", "clicks", "--domain", "1", `--from=${from}`, "--to", "5"), from).toBe(
          `--from must be a Unix time in seconds from 0 to 253402300799, not "${from}"`
        )
      }
    })
  )

  it.effect("refuses what is wrong with a one-line reason", () =>
    Effect.gen(function* () {
      const tooMany = Array.from({ length: 21 }, (_, i) => ({ ...SOURCE, field_code: `utm_${i}` }))
      const utm = (fields: unknown) => ["utm-template", "create", "--domain", "1", "--name", "T", "--fields", JSON.stringify(fields)]
      const user = ["user", "create", "--account", "1", "--email", "a@example.com"]
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["account", "delete"], 'unknown command "account delete"'],
        [["user"], 'unknown command "user"'],
        [["migrate", "now"], 'unexpected argument "now"'],
        [["migrate", "-x"], "unknown option -x"],
        [["migrate", "--name", "x"], "--name is not an option of migrate"],
        [["account", "create", "--name", "A"], "account create needs --plan"],
        [["account", "create", "--name", "--plan", "free"], "--name needs a value"],
        [["account", "create", "--name", "A", "--name", "B", "--plan", "free"], "--name is given twice"],
        [["account", "create", "--name", " ", "--plan", "free"], "--name must have 1 to 200 characters"],
        [["account", "create", "--name", "A", "--plan", "free", "--link-quota", "lots"], '--link-quota must be a whole number from 0 to 2147483647, not "lots"'],
        [["account", "create", "--name", "A", "--plan", "free", "--link-quota=-1"], '--link-quota must be a whole number from 0 to 2147483647, not "-1"'],
        [["user", "create", "--account", "0", "--email", "a@example.com", "--password", PASSWORD], '--account must be a positive whole number, not "0"'],
        [["user", "create", "--account", "1.5", "--email", "a@example.com", "--password", PASSWORD], '--account must be a positive whole number, not "1.5"'],
        [[...user, "--password", PASSWORD, "--password-stdin"], "user create takes --password or --password-stdin, not both"],
        [["user", "list", "--page", "0"], '--page must be a positive whole number, not "0"'],
        [["link", "list"], "link list needs --domain"],
        [["link", "show", "--link", "x"], '--link must be a positive whole number, not "x"'],
        [["token-secret", "rotate", "--email", "a@example.com"], "--email is not an option of token-secret rotate"],
        [["user", "delete"], "user delete needs --email"],
        [[...user, "--password", "aaaaaaaaaaaa"], "the password must use at least 5 different characters"],
        [[...user, "--password", "a@example.com"], "the password must not be the e-mail address"],
        [[...user, "--password", PASSWORD, "--nickname", ""], "--nickname must have 1 to 100 characters"],
        [["user", "refresh-token"], "user refresh-token needs --email"],
        [["user", "disable"], "user disable needs --email"],
        [["user", "enable", "--email", "a@example.com", "--password", PASSWORD], "--password is not an option of user enable"],
        [["user", "password", "--email", "a@example.com", "--password-stdin", "--password", PASSWORD], "user password takes --password or --password-stdin, not both"],
        [["user", "password", "--email", "a@example.com", "--password", "short"], "the password must have at least 10 characters"],
        [["user", "password", "--email", "a@example.com", "--password", "A@example.com"], "the password must not be the e-mail address"],
        [["domain", "admin", "--user", "1", "--domain", "x1"], '--domain must be a positive whole number, not "x1"'],
        [["domain", "ssl", "--domain", "1"], "domain ssl needs exactly one of --on and --off"],
        [["domain", "ssl", "--domain", "1", "--on", "--off"], "domain ssl needs exactly one of --on and --off"],
        [["domain", "ssl", "--domain", "1", "--on=yes"], "--on takes no value"],
        [["utm-template", "create", "--domain", "1", "--name", "T", "--fields", "{}"], "--fields is not valid: fields: must be an array of objects {label, field_code, type, required}"],
        [utm([]), "--fields is not valid: fields: a template needs at least one field"],
        [utm(tooMany), "--fields is not valid: fields: a template has at most 20 fields"],
        [utm([SOURCE, SOURCE]), '--fields is not valid: fields[1].field_code: field_code "utm_source" appears twice'],
        [utm([{ ...SOURCE, field_code: "UTM Source" }]), "--fields is not valid: fields[0].field_code: field_code must be 1 to 64 characters from a-z, 0-9 and _ (like utm_source)"],
        [utm([{ ...SOURCE, label: " " }]), "--fields is not valid: fields[0].label: label must not be empty"],
        [utm([{ ...SOURCE, type: 7 }]), "--fields is not valid: fields[0].type: Expected string, actual 7"],
        [utm([{ ...SOURCE, required: "yes" }]), '--fields is not valid: fields[0].required: Expected boolean, actual "yes"'],
        [utm([{ ...SOURCE, extra: 1 }]), '--fields is not valid: fields[0].extra: is unexpected, expected: "label" | "field_code" | "type" | "required"'],
        [utm([SOURCE, 1]), "--fields is not valid: fields[1]: a field must be an object {label, field_code, type, required}"],
        [["utm-template", "create", "--domain", "1", "--name", "x".repeat(101), "--fields", "[]"], "--name must have 1 to 100 characters"]
      ]
      for (const [args, message] of cases) expect(yield* usageError(...args), args.join(" ")).toBe(message)
      const { label: _label, ...noLabel } = SOURCE
      expect(yield* usageError(...utm([noLabel, { ...MEDIUM, required: 1 }]))).toBe(
        "--fields is not valid: fields[0].label: is missing; fields[1].required: Expected boolean, actual 1"
      )
    })
  )
})

// Each CLI run is a fresh Node process opening the database: seconds each on a loaded machine.
describe("admin CLI", { timeout: 120_000 }, () => {
  it.effect("migrate applies every migration once, then none", () =>
    Effect.gen(function* () {
      expect(yield* json("migrate")).toEqual({ applied: loadMigrations().map((m) => m.id) })
      expect(yield* json("migrate")).toEqual({ applied: [] })
      const human = yield* cli(["migrate"])
      expect(human).toEqual({ code: 0, stdout: "the database schema is up to date\n", stderr: "" })
    })
  )

  it.effect("account create answers {id, name, plan, link_quota}", () =>
    Effect.gen(function* () {
      const account = yield* json("account", "create", "--name", " Acme ", "--plan", "business", "--link-quota", "100")
      expect(account).toEqual({ id: expect.any(Number), name: "Acme", plan: "business", link_quota: 100 })
      const human = yield* cli(["account", "create", "--name", "Solo", "--plan", "free"])
      expect(human.code).toBe(0)
      expect(human.stderr).toBe("")
      expect(human.stdout).toMatch(/^created account \d+ "Solo" \(plan free, unlimited links\)\n$/)
    })
  )

  it.effect("user create makes a user who logs in; refresh-token rotates and the old token stops working on E2", () =>
    Effect.gen(function* () {
      const accountId = numberAt(yield* json("account", "create", "--name", "Logins", "--plan", "team"), "id")
      const email = uniqueEmail("member")
      const member = yield* json("user", "create", "--account", String(accountId), "--email", email, "--password", PASSWORD)
      expect(member).toEqual({
        user_id: expect.any(Number),
        email,
        nickname: email.split("@")[0],
        role: "member",
        refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/)
      })
      const adminEmail = uniqueEmail("admin")
      const admin = yield* json(
        "user", "create", "--account", String(accountId), "--email", adminEmail, "--password", PASSWORD,
        "--nickname", "The Boss", "--role", "account_admin"
      )
      expect(admin).toMatchObject({ email: adminEmail, nickname: "The Boss", role: "account_admin" })

      const oldToken = stringAt(member, "refresh_token")
      const rotated = yield* json("user", "refresh-token", "--email", email.toUpperCase())
      const newToken = stringAt(rotated, "refresh_token")
      expect(rotated).toEqual({ refresh_token: newToken })
      expect(newToken).not.toBe(oldToken)

      const server = httpLayer({ port: 0, host: "127.0.0.1" }).pipe(
        Layer.provideMerge(Shutdown.layer),
        Layer.provideMerge(coreLayer(database())),
        Layer.provide(AppConfig.layerFromMap({ DATA_DIR: dataDir, RATE_LIMIT_PER_SECOND: "100000", RATE_LIMIT_PER_TOKEN_PER_SECOND: "100000" })),
        Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
      )
      yield* Effect.gen(function* () {
        const address = (yield* HttpServer.HttpServer).address
        const port = address._tag === "TcpAddress" ? address.port : 0
        const login = (body: Record<string, string>) =>
          Effect.promise(() =>
            fetch(`http://127.0.0.1:${port}/api/v4/access_token`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify(body)
            }).then((response) => response.status)
          )
        expect(yield* login({ email, password: PASSWORD })).toBe(200)
        expect(yield* login({ email: adminEmail, password: PASSWORD })).toBe(200)
        expect(yield* login({ email, refresh_token: newToken })).toBe(200)
        expect(yield* login({ email, refresh_token: oldToken })).toBe(401)

        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ password_hash: string; refresh_token_hash: Uint8Array }>`
          SELECT password_hash, refresh_token_hash FROM users WHERE id = ${numberAt(member, "user_id")}`
        expect(row!.password_hash).toMatch(/^\$argon2id\$/)
        expect(yield* Effect.promise(() => verify(row!.password_hash, PASSWORD))).toBe(true)
        expect(Buffer.from(row!.refresh_token_hash).toString("hex")).toBe(createHash("sha256").update(newToken).digest("hex"))
      }).pipe(Effect.provide(server))
    })
  )

  it.effect("domain admin and domain ssl change the domain of the account only", () =>
    Effect.gen(function* () {
      const { accountA, domainA, domainB } = yield* fixture
      const member = yield* json(
        "user", "create", "--account", String(accountA), "--email", uniqueEmail("domains"), "--password", PASSWORD
      )
      const userId = numberAt(member, "user_id")
      expect(yield* json("domain", "admin", "--user", String(userId), "--domain", String(domainA))).toEqual({
        user_id: userId,
        domain_id: domainA
      })
      yield* refused(["domain", "admin", "--user", String(userId), "--domain", String(domainB)], 1, /different accounts/)
      yield* refused(["domain", "admin", "--user", "999999", "--domain", String(domainA)], 1, /user 999999 or domain/)

      expect(yield* json("domain", "ssl", "--domain", String(domainA), "--on")).toEqual({ domain_id: domainA, has_ssl: true })
      const off = yield* cli(["domain", "ssl", "--domain", String(domainA), "--off"])
      expect(off).toEqual({ code: 0, stdout: `short links of domain ${domainA} now start with http://\n`, stderr: "" })
      yield* refused(["domain", "ssl", "--domain", "999999", "--on"], 1, /^error: there is no domain 999999\n$/)

      const state = yield* withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const ssl = yield* sql<{ id: number; has_ssl: boolean }>`SELECT id, has_ssl FROM domains WHERE id = ${domainA}`
          const admins = yield* sql<{ domain_id: number }>`SELECT domain_id FROM domain_admins WHERE user_id = ${userId}`
          return { ssl, admins }
        })
      )
      expect(state.ssl).toEqual([{ id: domainA, has_ssl: false }])
      expect(state.admins).toEqual([{ domain_id: domainA }])
    })
  )

  it.effect("utm-template create answers {id, name, fields} and the repository lists it for its account only", () =>
    Effect.gen(function* () {
      const { accountA, accountB, domainA } = yield* fixture
      const fields = [SOURCE, MEDIUM]
      const template = yield* json(
        "utm-template", "create", "--domain", String(domainA), "--name", "Newsletter", "--fields", JSON.stringify(fields)
      )
      expect(template).toEqual({ id: expect.any(Number), name: "Newsletter", fields })
      yield* refused(
        ["utm-template", "create", "--domain", "999999", "--name", "X", "--fields", JSON.stringify([SOURCE])],
        1,
        /^error: there is no domain 999999\n$/
      )
      const listed = yield* withDatabase(
        Effect.gen(function* () {
          const repo = yield* UtmTemplateRepo
          return {
            own: yield* repo.listByDomain({ accountId: accountA, domainId: domainA }),
            other: yield* repo.listByDomain({ accountId: accountB, domainId: domainA })
          }
        }).pipe(Effect.provide(UtmTemplateRepo.Default))
      )
      expect(listed.own.map((t) => ({ id: t.id, name: t.name, fields: t.fields }))).toEqual([template])
      expect(listed.other).toEqual([])
    })
  )

  it.effect("refusals that need the database exit 1 with one line", () =>
    Effect.gen(function* () {
      const { accountA } = yield* fixture
      const email = uniqueEmail("dupe")
      yield* json("user", "create", "--account", String(accountA), "--email", email, "--password", PASSWORD)
      yield* refused(
        ["user", "create", "--account", String(accountA), "--email", email.toUpperCase(), "--password", PASSWORD],
        1,
        /^error: a user with the e-mail .+ already exists\n$/
      )
      yield* refused(
        ["user", "create", "--account", "999999", "--email", uniqueEmail("orphan"), "--password", PASSWORD],
        1,
        /^error: there is no account 999999\n$/
      )
      const unknownUser = yield* cli(["user", "refresh-token", "--email", "nobody@example.com", "--json"])
      expect(unknownUser).toEqual({
        code: 1,
        stdout: `${JSON.stringify({ error: "there is no user with the e-mail nobody@example.com" })}\n`,
        stderr: "error: there is no user with the e-mail nobody@example.com\n"
      })
      for (const command of [["user", "disable"], ["user", "enable"], ["user", "password", "--password", PASSWORD]]) {
        yield* refused([...command, "--email", "nobody@example.com"], 1, /^error: there is no user with the e-mail nobody@example.com\n$/)
      }
    })
  )

  // Two instances and the CLI on one PostgreSQL database (the embedded one admits one process at a time).
  describeUnless(withoutServer("two instances share one database"), "on two instances", () => {
    it.scopedLive(
      "refresh-token, disable and password revoke the user's access tokens on every instance within a second; a disabled user cannot log in until enabled; DELETE /access_token on one instance is refused on the other",
      () =>
        Effect.gen(function* () {
          const accountId = numberAt(yield* json("account", "create", "--name", "Revocations", "--plan", "team"), "id")
          const email = uniqueEmail("revoked")
          const userId = numberAt(yield* json("user", "create", "--account", String(accountId), "--email", email, "--password", PASSWORD), "user_id")
          const [a, b] = [yield* instance, yield* instance]
          const on = (url: string) => Effect.provideService(BaseUrl, url)
          const login = (url: string, body: Record<string, string>) => call("POST", "/api/v4/access_token", { body }).pipe(on(url))
          const token = (url: string, body: Record<string, string>) => Effect.map(login(url, body), (reply) => stringAt(reply.body, "access_token"))
          const works = (url: string, bearer: string) =>
            Effect.map(call("GET", "/api/v4/domains", { token: bearer }).pipe(on(url)), (reply) => reply.status === 200)
          const isRevoked = (url: string, bearer: string) =>
            Effect.map(call("GET", "/api/v4/domains", { token: bearer }).pipe(on(url)), (reply) => reply.status === 401 && codes(reply)[0] === 10000)
          /** The token works on both instances (which then cache its owner). */
          const usedOnBoth = (bearer: string) =>
            Effect.gen(function* () {
              expect(yield* works(a, bearer)).toBe(true)
              expect(yield* works(b, bearer)).toBe(true)
            })
          const revokedOnBoth = (bearer: string) =>
            Effect.gen(function* () {
              expect(yield* within(1000, isRevoked(a, bearer))).toBeLessThan(1000)
              expect(yield* within(1000, isRevoked(b, bearer))).toBeLessThan(1000)
            })

          const first = yield* token(a, { email, password: PASSWORD })
          yield* usedOnBoth(first)
          const rotated = stringAt(yield* json("user", "refresh-token", "--email", email), "refresh_token")
          yield* revokedOnBoth(first)
          expect((yield* login(b, { email, refresh_token: rotated })).status).toBe(200)
          const second = yield* token(b, { email, password: PASSWORD })
          expect(second).not.toBe(first)
          yield* usedOnBoth(second)

          expect(yield* json("user", "disable", "--email", email)).toEqual({ user_id: userId, email, disabled: true })
          yield* revokedOnBoth(second)
          for (const path of ["/api/v4/validate_login", "/api/v4/access_token"]) {
            const reply = yield* call("POST", path, { body: { email, password: PASSWORD } }).pipe(on(a))
            expect([reply.status, reply.body], path).toEqual([401, { success: 0, errors: [{ code: 10001, message: `${email} may not be registered` }] }])
          }
          expect(yield* json("user", "enable", "--email", email.toUpperCase())).toEqual({ user_id: userId, email, disabled: false })
          const third = yield* token(a, { email, password: PASSWORD })
          expect([first, second]).not.toContain(third)
          yield* usedOnBoth(third)

          const password = "another long passphrase"
          expect(yield* json("user", "password", "--email", email, "--password", password)).toEqual({ user_id: userId, email })
          yield* revokedOnBoth(third)
          expect((yield* login(b, { email, password: PASSWORD })).status).toBe(401)
          const fourth = yield* token(b, { email, password })
          yield* usedOnBoth(fourth)

          const signedOut = yield* call("DELETE", "/api/v4/access_token", { token: fourth }).pipe(on(a))
          expect([signedOut.status, signedOut.body]).toEqual([200, { success: 1 }])
          yield* revokedOnBoth(fourth)
          yield* usedOnBoth(yield* token(b, { email, password }))
        }),
      120_000
    )
  })

  it.effect("bad command lines are refused with exit 2 and one line on stderr, before the database is opened", () =>
    Effect.gen(function* () {
      const create = ["user", "create", "--account", "1", "--email", "a@example.com"]
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
        [["frobnicate"], /unknown command "frobnicate"/],
        [["account", "create", "--name", "A", "--plan", "free", "--colour", "red"], /unknown option --colour/],
        [["account", "create", "--plan", "free"], /account create needs --name/],
        [["domain", "ssl", "--domain", "abc", "--on"], /--domain must be a positive whole number, not "abc"/],
        [[...create, "--password", PASSWORD, "--role", "owner"], /--role must be one of account_admin, member, not "owner"/],
        [[...create, "--password", "short"], /the password must have at least 10 characters/],
        [[...create, "--password", ""], /the password is empty/],
        [["user", "create", "--account", "1", "--email", "not-an-email", "--password", PASSWORD], /"not-an-email" is not a valid e-mail address/],
        [["utm-template", "create", "--domain", "1", "--name", "T", "--fields", "[{"], /--fields is not valid JSON/]
      ]
      // A database that cannot be reached: a command that got that far would fail with exit 1.
      const unreachable = { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" }
      yield* Effect.forEach(
        cases,
        ([args, message]) =>
          Effect.gen(function* () {
            const run = yield* cli(args, unreachable)
            expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(2)
            expect(run.stdout).toBe("")
            expect(run.stderr, args.join(" ")).toMatch(/^error: [^\n]+ \(see --help\)\n$/)
            expect(run.stderr, args.join(" ")).toMatch(message)
          }),
        { concurrency: 2, discard: true }
      )
      const message = '--plan must be one of free, team, business, enterprise, not "gold" (see --help)'
      const asJson = yield* cli(["account", "create", "--name", "A", "--plan", "gold", "--json"], unreachable)
      expect(asJson).toEqual({ code: 2, stdout: `${JSON.stringify({ error: message })}\n`, stderr: `error: ${message}\n` })
    })
  )

  it.effect("--help and no command print the usage", () =>
    Effect.gen(function* () {
      const [help, bare, helpJson] = yield* Effect.all([cli(["--help"]), cli([]), cli(["user", "create", "--help", "--json"])], {
        concurrency: "unbounded"
      })
      for (const run of [help, bare]) {
        expect(run.code).toBe(0)
        expect(run.stderr).toBe("")
        for (const command of ["account create", "user create", "user refresh-token", "user disable", "user enable", "user password", "domain admin", "domain ssl", "utm-template create", "migrate"]) {
          expect(run.stdout).toContain(command)
        }
      }
      expect(helpJson.code).toBe(0)
      expect(parse(helpJson.stdout)).toEqual({ usage: expect.stringContaining("Usage:") })
    })
  )

  it.effect("the embedded database refuses a second process while one holds it without a socket, and takes over a dead one's lock", () =>
    Effect.gen(function* () {
      const embeddedDir = mkdtempSync(join(tmpdir(), "links-cli-lock-"))
      scratch.push(embeddedDir)
      const lockFile = join(embeddedDir, "pglite.lock")
      const embedded = { DATA_DIR: embeddedDir, DATABASE_URL: undefined }
      // A live process that holds the lock and announced no socket (one starting, or of an older version).
      writeFileSync(lockFile, `${process.pid}\n`)
      const whileHeld = yield* cli(["migrate"], embedded)
      expect(whileHeld).toEqual({
        code: 1,
        stdout: "",
        stderr: `error: the embedded database in ${embeddedDir} is in use by process ${process.pid}; stop it or set DATABASE_URL\n`
      })
      rmSync(lockFile)

      const dead = spawnSync(process.execPath, ["-e", "0"]).pid
      writeFileSync(lockFile, `${dead}\n`)
      const taken = yield* cli(["migrate", "--json"], embedded)
      expect(taken.stderr).toBe("")
      expect(parse(taken.stdout)).toEqual({ applied: loadMigrations().map((m) => m.id) })
      expect(existsSync(lockFile)).toBe(false)
    })
  )

  it.effect("list and show accounts, users, domains and links, as JSON and as tables; unknown ids are refused", () =>
    Effect.gen(function* () {
      const { accountA, domainA } = yield* fixture
      const email = uniqueEmail("listed")
      const userId = numberAt(yield* json("user", "create", "--account", String(accountA), "--email", email, "--password", PASSWORD), "user_id")
      const linkId = yield* withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ id: number }>`
            INSERT INTO links (domain_id, user_id, url, alias, redirect_url)
            VALUES (${domainA}, ${userId}, 'https://example.com/listed', ${`l${randomBytes(3).toString("hex")}`}, 'https://example.com/listed')
            RETURNING id`
          return rows[0]!.id
        })
      )
      const account = yield* json("account", "show", "--account", String(accountA))
      expect(account).toMatchObject({ id: accountA, name: "fixture A", plan: "team", link_quota: null, domains: 1 })
      expect(numberAt(account, "links")).toBeGreaterThanOrEqual(1)
      const accounts = yield* json("account", "list")
      expect(at(accounts, "objects")).toEqual(expect.arrayContaining([expect.objectContaining({ id: accountA })]))
      expect(at(accounts, "meta")).toMatchObject({ page: 1, per_page: 50 })

      const users = yield* json("user", "list", "--account", String(accountA))
      expect(at(users, "objects")).toEqual(expect.arrayContaining([expect.objectContaining({ user_id: userId, email, role: "member", disabled: false, links: 1 })]))
      expect(yield* json("user", "show", "--email", email.toUpperCase())).toMatchObject({ user_id: userId, account_id: accountA, email, links: 1, access_tokens: 0, admin_of_domains: [] })

      expect(yield* json("domain", "list", "--account", String(accountA))).toMatchObject({ objects: [{ id: domainA, account_id: accountA, status: "active" }], meta: { total: 1 } })
      expect(yield* json("domain", "show", "--domain", String(domainA))).toMatchObject({ id: domainA, links: 1, has_ssl: expect.any(Boolean) })
      expect(yield* json("link", "list", "--domain", String(domainA))).toMatchObject({ objects: [expect.objectContaining({ id: linkId, user_id: userId, status: "active" })] })
      expect(yield* json("link", "show", "--link", String(linkId))).toMatchObject({ id: linkId, domain_id: domainA, url: "https://example.com/listed", click_count: 0 })
      expect((yield* json("link", "list", "--domain", String(domainA), "--page", "9")) ).toMatchObject({ objects: [] })

      const tableRun = yield* cli(["user", "list", "--account", String(accountA)])
      expect(tableRun.code).toBe(0)
      const lines = tableRun.stdout.trimEnd().split("\n")
      expect(lines[0]).toMatch(/^user_id\s+account_id\s+email\s+nickname\s+role\s+disabled\s+links\s+created$/)
      expect(lines.some((line) => line.includes(email) && / member +false +1 /.test(line))).toBe(true)
      expect(lines.at(-1)).toMatch(/^\(page 1 of 1, \d+ users in all\)$/)
      const record = yield* cli(["link", "show", "--link", String(linkId)])
      expect(record.stdout).toMatch(/^id +\d+\n/)
      expect(record.stdout).toContain(`user_id        ${userId}\n`)

      yield* refused(["account", "show", "--account", "999999"], 1, /^error: there is no account 999999\n$/)
      yield* refused(["user", "show", "--email", "nobody@example.com"], 1, /^error: there is no user with the e-mail nobody@example.com\n$/)
      yield* refused(["domain", "show", "--domain", "999999"], 1, /^error: there is no domain 999999\n$/)
      yield* refused(["link", "list", "--domain", "999999"], 1, /^error: there is no domain 999999\n$/)
      yield* refused(["link", "show", "--link", "999999"], 1, /^error: there is no link 999999\n$/)
      yield* refused(["link", "list", "--domain", "1", "--colour", "red"], 2, /unknown option --colour/)
    })
  )

  it.effect("passwords come from stdin or a terminal, never only from the command line; revoke-tokens, delete", () =>
    Effect.gen(function* () {
      const { accountA } = yield* fixture
      const email = uniqueEmail("stdin")
      const created = yield* cli(["user", "create", "--account", String(accountA), "--email", email, "--password-stdin", "--json"], {}, `${PASSWORD}\n`)
      expect(created.code, created.stderr).toBe(0)
      const userId = numberAt(parse(created.stdout), "user_id")
      const hashOf = withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ password_hash: string }>`SELECT password_hash FROM users WHERE id = ${userId}`
          return rows[0]!.password_hash
        })
      )
      expect(yield* Effect.promise(() => hashOf.pipe(Effect.runPromise).then((hash) => verify(hash, PASSWORD)))).toBe(true)
      const changed = yield* cli(["user", "password", "--email", email, "--password-stdin", "--json"], {}, "another long passphrase\r\n")
      expect(changed.code, changed.stderr).toBe(0)
      expect(yield* Effect.promise(() => hashOf.pipe(Effect.runPromise).then((hash) => verify(hash, "another long passphrase")))).toBe(true)

      // Not a terminal and no password: refused before the database is opened.
      const unreachable = { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" }
      const noTerminal = yield* cli(["user", "password", "--email", email], unreachable)
      expect(noTerminal).toEqual({
        code: 2,
        stdout: "",
        stderr: "error: no password given: pass it on stdin with --password-stdin, or run on a terminal to be asked for it (see --help)\n"
      })
      const weak = yield* cli(["user", "password", "--email", email, "--password-stdin"], unreachable, "short\n")
      expect([weak.code, weak.stderr]).toEqual([2, "error: the password must have at least 10 characters (see --help)\n"])

      expect(yield* json("user", "revoke-tokens", "--email", email)).toEqual({ user_id: userId, email })
      yield* refused(["user", "revoke-tokens", "--email", "nobody@example.com"], 1, /^error: there is no user with the e-mail nobody@example.com\n$/)

      expect(yield* json("user", "delete", "--email", email.toUpperCase())).toEqual({ user_id: userId, email, deleted: true })
      yield* refused(["user", "show", "--email", email], 1, /there is no user/)
      yield* refused(["user", "delete", "--email", email], 1, /^error: there is no user with the e-mail /)
      const owner = uniqueEmail("owner")
      const ownerId = numberAt(yield* json("user", "create", "--account", String(accountA), "--email", owner, "--password", PASSWORD), "user_id")
      yield* withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const { domainA } = yield* fixture
          yield* sql`INSERT INTO links (domain_id, user_id, url, alias, redirect_url)
            VALUES (${domainA}, ${ownerId}, 'https://example.com/', ${`o${randomBytes(3).toString("hex")}`}, 'https://example.com/')`
        })
      )
      yield* refused(["user", "delete", "--email", owner], 1, new RegExp(`^error: user ${ownerId} ${owner} owns 1 link\\(s\\), 0 tag\\(s\\) and 0 group\\(s\\), which keep them: disable them instead \\(user disable\\), or hand them to another user \\(--reassign-to\\)\\n$`))
    })
  )

  it.effect("user delete --reassign-to hands links (deleted ones too), tags, groups, import runs and click rollups to an enabled user of the account", () =>
    Effect.gen(function* () {
      const { accountA, accountB, domainA } = yield* fixture
      const newUser = (accountId: number, name: string) =>
        Effect.map(json("user", "create", "--account", String(accountId), "--email", uniqueEmail(name), "--password", PASSWORD), (user) => ({
          id: numberAt(user, "user_id"),
          email: stringAt(user, "email")
        }))
      const [leaving, heir, disabled, stranger] = yield* Effect.all([newUser(accountA, "leaving"), newUser(accountA, "heir"), newUser(accountA, "off"), newUser(accountB, "stranger")])
      yield* json("user", "disable", "--email", disabled.email)
      const suffix = randomBytes(3).toString("hex")
      const links = yield* withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const link = (status: string) =>
            Effect.map(
              sql<{ id: number }>`INSERT INTO links (domain_id, user_id, url, alias, redirect_url, status)
                VALUES (${domainA}, ${leaving.id}, 'https://example.com/', ${`r${status}${suffix}`}, 'https://example.com/', ${status}) RETURNING id`,
              (rows) => rows[0]!.id
            )
          const ids = [yield* link("active"), yield* link("deleted")]
          yield* sql`INSERT INTO tags (domain_id, user_id, name) VALUES (${domainA}, ${leaving.id}, ${`tag ${suffix}`})`
          yield* sql`INSERT INTO link_groups (domain_id, user_id, name) VALUES (${domainA}, ${leaving.id}, ${`group ${suffix}`})`
          yield* sql`INSERT INTO import_runs (domain_id, user_id, source, file_sha256, file_name) VALUES (${domainA}, ${leaving.id}, 'csv', ${suffix}, 'links.csv')`
          // The same rollup key for both users: the heir's count and the leaving user's add up.
          for (const [user, clicks] of [[leaving.id, 3], [heir.id, 2]] as const) {
            yield* sql`INSERT INTO click_rollups_user (domain_id, user_id, kind, day, value, region, city, clicks, scans) VALUES (${domainA}, ${user}, 'g', '2026-01-02', 'FR', '', '', ${clicks}, 1)`
            yield* sql`INSERT INTO click_rollups_user_month (domain_id, user_id, kind, month, value, region, city, clicks, scans) VALUES (${domainA}, ${user}, 'g', '2026-01-01', 'FR', '', '', ${clicks}, 1)`
            yield* sql`INSERT INTO click_rollups_user_hour (domain_id, user_id, kind, hour, value, region, city, clicks, scans) VALUES (${domainA}, ${user}, 'g', '2026-01-02T10:00:00Z', 'FR', '', '', ${clicks}, 1)`
          }
          return ids
        })
      )
      const remove = ["user", "delete", "--email", leaving.email, "--reassign-to"]
      yield* refused([...remove, leaving.email.toUpperCase()], 1, new RegExp(`^error: --reassign-to names user ${leaving.id} ${leaving.email}, the one being deleted\\n$`))
      yield* refused([...remove, String(stranger.id)], 1, new RegExp(`^error: user ${stranger.id} ${stranger.email} is of account ${accountB}, not of account ${accountA} of user ${leaving.id} `))
      yield* refused([...remove, disabled.email], 1, new RegExp(`^error: user ${disabled.id} ${disabled.email} is disabled: enable them first \\(user enable\\), or choose another user\\n$`))
      yield* refused([...remove, "999999999"], 1, /^error: there is no user 999999999\n$/)
      yield* refused([...remove, "nobody@example.com"], 1, /^error: there is no user with the e-mail nobody@example.com\n$/)
      expect(yield* usageError(...remove, "nobody")).toBe('--reassign-to must be a user id or an e-mail address, not "nobody"')
      expect(numberAt(yield* json("link", "show", "--link", String(links[0])), "user_id")).toBe(leaving.id)

      expect(yield* json(...remove, String(heir.id))).toEqual({
        user_id: leaving.id,
        email: leaving.email,
        deleted: true,
        reassigned_to: heir.id,
        links: 2,
        tags: 1,
        groups: 1
      })
      yield* refused(["user", "show", "--email", leaving.email], 1, /there is no user/)
      for (const id of links) expect(numberAt(yield* json("link", "show", "--link", String(id)), "user_id")).toBe(heir.id)
      const owners = yield* withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ what: string; user_id: number; clicks: number }>`
            SELECT 'tag' AS what, user_id, 0 AS clicks FROM tags WHERE name = ${`tag ${suffix}`}
            UNION ALL SELECT 'group', user_id, 0 FROM link_groups WHERE name = ${`group ${suffix}`}
            UNION ALL SELECT 'import', user_id, 0 FROM import_runs WHERE file_sha256 = ${suffix}
            UNION ALL SELECT 'day', user_id, clicks FROM click_rollups_user WHERE domain_id = ${domainA} AND user_id IN (${leaving.id}, ${heir.id})
            UNION ALL SELECT 'month', user_id, clicks FROM click_rollups_user_month WHERE domain_id = ${domainA} AND user_id IN (${leaving.id}, ${heir.id})
            UNION ALL SELECT 'hour', user_id, clicks FROM click_rollups_user_hour WHERE domain_id = ${domainA} AND user_id IN (${leaving.id}, ${heir.id})
            ORDER BY 1`
        })
      )
      expect(owners.map((row) => [row.what, row.user_id, row.clicks])).toEqual(
        [["day", heir.id, 5], ["group", heir.id, 0], ["hour", heir.id, 5], ["import", heir.id, 0], ["month", heir.id, 5], ["tag", heir.id, 0]]
      )

      // By e-mail, as text: a user owning nothing is deleted as before.
      const idle = yield* newUser(accountA, "idle")
      const text = yield* cli(["user", "delete", "--email", idle.email, "--reassign-to", heir.email])
      expect(text).toEqual({
        code: 0,
        stdout: `deleted user ${idle.id} ${idle.email}; their 0 link(s), 0 tag(s) and 0 group(s) now belong to user ${heir.id}\n`,
        stderr: ""
      })
    })
  )

  it.effect("on a terminal the password is asked for twice, without echo", () =>
    Effect.gen(function* () {
      const { accountA } = yield* fixture
      const email = uniqueEmail("typed")
      const userId = numberAt(yield* json("user", "create", "--account", String(accountA), "--email", email, "--password", PASSWORD), "user_id")
      /** The command under a pseudo-terminal (util-linux `script`), answering each question once it is asked. */
      const onTerminal = (args: ReadonlyArray<string>, answers: ReadonlyArray<string>) =>
        Effect.async<string>((resume) => {
          const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir }
          for (const name of ["DATABASE_URL", "TEST_DATABASE_URL", "TOKEN_SECRET"]) delete env[name]
          if (databaseUrl !== undefined) env["DATABASE_URL"] = databaseUrl
          const command = [process.execPath, join(bundleDir, "Cli", "main.js"), ...args].join(" ")
          const child = spawn("script", ["-qfec", command, "/dev/null"], { cwd: ROOT, env })
          let output = ""
          let answered = 0
          child.stdout.on("data", (chunk: Buffer) => {
            output += chunk.toString("utf8")
            const asked = output.split(/New password: |The same again: /).length - 1
            while (answered < asked && answered < answers.length) child.stdin.write(`${answers[answered++]}\r`)
          })
          child.on("close", () => resume(Effect.succeed(output)))
          return Effect.sync(() => child.kill())
        })
      const typed = "a typed long passphrase"
      const done = yield* onTerminal(["user", "password", "--email", email], [typed, typed])
      expect(done).toMatch(/New password: \r?\n(\r\n)?The same again: /)
      expect(done).toContain(`new password of user ${userId} ${email}`)
      expect(done).not.toContain(typed)
      const hash = yield* withDatabase(
        Effect.map(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ password_hash: string }>`SELECT password_hash FROM users WHERE id = ${userId}`), (rows) => rows[0]!.password_hash)
      )
      expect(yield* Effect.promise(() => verify(hash, typed))).toBe(true)
      const differ = yield* onTerminal(["user", "password", "--email", email], [typed, "not the same passphrase"])
      expect(differ).toContain("error: the two passwords typed differ")
    })
  )

  it.effect("--version and per-command --help", () =>
    Effect.gen(function* () {
      const manifest = parse(readFileSync(join(ROOT, "package.json"), "utf8"))
      const [version, asJson, help, group] = yield* Effect.all(
        [cli(["--version"]), cli(["user", "list", "--version", "--json"]), cli(["user", "password", "--help"]), cli(["user", "--help"])],
        { concurrency: "unbounded" }
      )
      expect(version).toEqual({ code: 0, stdout: `${stringAt(manifest, "version")}\n`, stderr: "" })
      expect(parse(asJson.stdout)).toEqual({ version: stringAt(manifest, "version") })
      expect(help.code).toBe(0)
      expect(help.stdout).toMatch(/^Usage: npm run cli -- user password --email E \[--password P \| --password-stdin\] \[--json\]\n/)
      expect(help.stdout).not.toContain("account create")
      // A group's first word: its own commands only.
      expect(group.code).toBe(0)
      expect(group.stdout).toMatch(/^Usage: npm run cli -- user <command> \[options\] \[--json\]\n\nCommands:\n  user create /)
      expect(group.stdout).toContain("  user password --email E")
      expect(group.stdout).not.toContain("account create")
    })
  )

  it.effect("token-secret rotate writes a new secret and revokes every access token; refused when TOKEN_SECRET sets it", () =>
    Effect.gen(function* () {
      // This file's DATA_DIR: on the embedded database it is also where the database is.
      const secretDir = dataDir
      const file = join(secretDir, "token-secret")
      writeFileSync(file, "the old secret", { mode: 0o600 })
      const { accountA } = yield* fixture
      const email = uniqueEmail("rotated")
      const userId = numberAt(yield* json("user", "create", "--account", String(accountA), "--email", email, "--password", PASSWORD), "user_id")
      const tokens = withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`INSERT INTO access_tokens (token_hash, seed, user_id, expires)
            VALUES (${randomBytes(32)}, ${randomBytes(32)}, ${userId}, now() + interval '1 hour')`
        })
      )
      yield* tokens
      const run = yield* cli(["token-secret", "rotate", "--json"], { DATA_DIR: secretDir })
      expect(run.code, run.stderr).toBe(0)
      expect(numberAt(parse(run.stdout), "revoked_access_tokens")).toBeGreaterThanOrEqual(1)
      const after = readFileSync(file, "utf8")
      expect(after).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(yield* json("user", "show", "--email", email)).toMatchObject({ access_tokens: 0 })
      const fromEnvironment = yield* cli(["token-secret", "rotate"], { DATA_DIR: secretDir, TOKEN_SECRET: "set by the operator" })
      expect(fromEnvironment.code).toBe(1)
      expect(fromEnvironment.stderr).toMatch(/^error: TOKEN_SECRET sets the token secret: give every instance a new value and restart them/)
      expect(readFileSync(file, "utf8")).toBe(after)
    })
  )

  it.scopedLive("on the embedded database the CLI works while the server runs, through the server's socket, and its changes reach the server", () =>
    Effect.gen(function* () {
      const embeddedDir = mkdtempSync(join(tmpdir(), "links-cli-live-"))
      scratch.push(embeddedDir)
      const embedded = { DATA_DIR: embeddedDir, DATABASE_URL: undefined }
      const layer = httpLayer({ port: 0, host: "127.0.0.1" }).pipe(
        Layer.provideMerge(Shutdown.layer),
        Layer.provideMerge(coreLayer(embeddedClientLayer(embeddedDir))),
        Layer.provide(AppConfig.layerFromMap({ DATA_DIR: embeddedDir, RATE_LIMIT_PER_SECOND: "100000", RATE_LIMIT_PER_TOKEN_PER_SECOND: "100000" })),
        Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
      )
      const address = Context.get(yield* Layer.build(layer), HttpServer.HttpServer).address
      const base = `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`
      const on = Effect.provideService(BaseUrl, base)
      expect(existsSync(join(embeddedDir, "pglite.socket"))).toBe(true)

      const run = (args: ReadonlyArray<string>, input?: string) =>
        Effect.map(cli([...args, "--json"], embedded, input), (result) => {
          expect(result.stderr).toBe("")
          expect(result.code).toBe(0)
          return parse(result.stdout)
        })
      const accountId = numberAt(yield* run(["account", "create", "--name", "Live", "--plan", "team"]), "id")
      const email = uniqueEmail("live")
      const userId = numberAt(yield* run(["user", "create", "--account", String(accountId), "--email", email, "--password-stdin"], `${PASSWORD}\n`), "user_id")
      const token = () => Effect.map(call("POST", "/api/v4/access_token", { body: { email, password: PASSWORD } }).pipe(on), (reply) => stringAt(reply.body, "access_token"))
      const isRevoked = (bearer: string) =>
        Effect.map(call("GET", "/api/v4/domains", { token: bearer }).pipe(on), (reply) => reply.status === 401 && codes(reply)[0] === 10000)

      const first = yield* token()
      expect(yield* isRevoked(first)).toBe(false)
      expect(yield* run(["user", "show", "--email", email])).toMatchObject({ user_id: userId, access_tokens: 1 })
      expect(yield* run(["user", "disable", "--email", email])).toEqual({ user_id: userId, email, disabled: true })
      expect(yield* within(1000, isRevoked(first))).toBeLessThan(1000)
      yield* run(["user", "enable", "--email", email])
      const second = yield* token()
      expect(yield* isRevoked(second)).toBe(false)
      expect(yield* run(["user", "revoke-tokens", "--email", email])).toEqual({ user_id: userId, email })
      expect(yield* within(1000, isRevoked(second))).toBeLessThan(1000)

      const third = yield* token()
      expect(yield* run(["token-secret", "rotate"])).toEqual({ revoked_access_tokens: 1 })
      expect(yield* within(1000, isRevoked(third))).toBeLessThan(1000)
      const fourth = yield* token()
      expect(fourth).not.toBe(third)
      expect(yield* token()).toBe(fourth)
      expect(yield* isRevoked(fourth)).toBe(false)
      expect(at(yield* run(["user", "list", "--account", String(accountId)]), "objects")).toEqual([expect.objectContaining({ user_id: userId, email })])
    }),
    120_000
  )
})
