import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Caller } from "../src/Accounts/User.ts"
import { parseInvocation } from "../src/Cli/Arguments.ts"
import { Command } from "../src/Cli/Command.ts"
import { type DatabaseCommand, execute } from "../src/Cli/Execute.ts"
import { AppConfig } from "../src/Config.ts"
import { Groups, type NewGroup } from "../src/Groups/Groups.ts"
import { embeddedClientLayer, serverClientLayer } from "../src/Sql/Database.ts"
import { migrate } from "../src/Sql/Migrator.ts"
import { newDomain, newLink } from "./support/Fixtures.ts"
import { at, call, callerOf, codes, newUser, numberAt, type Reply, type TestUser } from "./support/Http.ts"
import { documentedCodes } from "./support/OpenApiShapes.ts"
import { scopedServerDatabase, testServerUrl } from "./support/TestDatabase.ts"
import { BaseUrl, TestServer } from "./support/TestServer.ts"

const groupsOf = (user: TestUser, query: string, version: 3 | 4 = 4) => call("GET", `/api/v${version}/groups?${query}`, { token: user.token })
const objects = (reply: Reply) => at(reply.body, "objects") as ReadonlyArray<unknown>
const ids = (reply: Reply) => objects(reply).map((group) => at(group, "id"))

/** A group made as the operator makes it; `users` none unless given. */
const newGroup = (domainId: number, input: Partial<Omit<NewGroup, "domainId">> & { readonly name: string }) =>
  Effect.flatMap(Groups, (groups) => groups.create({ domainId, global: false, users: [], ...input })).pipe(Effect.orDie)

const deleteDomain = (domainId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE domains SET status = 'deleted' WHERE id = ${domainId}`).pipe(Effect.orDie)

/** Whether `requireVisible` lets the caller filter by the group on that domain. */
const visible = (caller: Caller, domainId: number, groupId: number) =>
  Effect.flatMap(Groups, (groups) => groups.requireVisible(caller, domainId, groupId)).pipe(
    Effect.as(true),
    Effect.catchTag("GroupNotFound", () => Effect.succeed(false))
  )

describe("groups (G1)", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("G1 shows global groups to the whole account, another group to its creator and listed users only", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const creator = yield* newUser({ accountId: admin.accountId, role: "member" })
        const listed = yield* newUser({ accountId: admin.accountId, role: "member" })
        const bystander = yield* newUser({ accountId: admin.accountId, role: "member" })
        const domainId = yield* newDomain(admin)
        const everyone = yield* newGroup(domainId, { name: "Everyone", global: true })
        const team = yield* newGroup(domainId, { name: "Team", owner: creator.userId, users: [listed.userId, creator.userId] })
        const adminOnly = yield* newGroup(domainId, { name: "Admin's" })
        expect(everyone).toMatchObject({ user_id: admin.userId, is_global: "1", users: [] })

        const seenBy = (user: TestUser) => Effect.map(groupsOf(user, `domain_id=${domainId}`), ids)
        expect(yield* seenBy(admin)).toEqual([everyone.id, adminOnly.id])
        expect(yield* seenBy(creator)).toEqual([everyone.id, team.id])
        expect(yield* seenBy(listed)).toEqual([everyone.id, team.id])
        expect(yield* seenBy(bystander)).toEqual([everyone.id])

        const reply = yield* groupsOf(listed, `domain_id=${domainId}`)
        expect(reply.status).toBe(200)
        expect(objects(reply)).toEqual([
          { id: everyone.id, name: "Everyone", created: expect.any(Number), modified: expect.any(Number), domain_id: domainId, user_id: admin.userId, is_global: "1", users: [] },
          { id: team.id, name: "Team", created: expect.any(Number), modified: expect.any(Number), domain_id: domainId, user_id: creator.userId, is_global: "0", users: [creator.userId, listed.userId] }
        ])
        expect(Math.abs(numberAt(reply.body, "objects", 1, "created") - Date.now() / 1000)).toBeLessThan(60)
        expect(at(reply.body, "meta")).toEqual({
          current_page: 1, previous_page: null, next_page: null, last_page: 1, from: 1, to: 2, per_page: 50, total: 2,
          path: `${yield* BaseUrl}/api/v4/groups`
        })

        const stranger = yield* newUser()
        const foreign = yield* groupsOf(stranger, `domain_id=${domainId}`)
        expect(foreign.status).toBe(404)
        expect(foreign.body).toEqual({ errors: [{ code: 10101, message: "domain_id is invalid" }] })
        const own = yield* groupsOf(stranger, `domain_id=${yield* newDomain(stranger)}`)
        expect(own.status).toBe(200)
        expect(objects(own)).toEqual([])
        expect(at(own.body, "meta")).toMatchObject({ total: 0, last_page: 1, from: null, to: null })
      })
    )

    it.effect("G1 pages hold 50 groups in version 4 and 20 at /api/v3/groups, counting only the visible ones", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const domainId = yield* newDomain(admin)
        yield* newGroup(domainId, { name: "member's own", owner: member.userId })
        const made = yield* Effect.forEach(Array.from({ length: 51 }, (_, i) => i), (i) => newGroup(domainId, { name: `g${i}`, global: i % 2 === 0 }))
        const query = (page: number) => `domain_id=${domainId}&page=${page}`

        const first = yield* groupsOf(admin, query(1))
        expect(ids(first)).toEqual(made.slice(0, 50).map((group) => group.id))
        expect(at(first.body, "meta")).toMatchObject({ current_page: 1, next_page: 2, last_page: 2, from: 1, to: 50, per_page: 50, total: 51 })
        const second = yield* groupsOf(admin, query(2))
        expect(ids(second)).toEqual([made[50]!.id])
        expect(at(second.body, "meta")).toMatchObject({ current_page: 2, previous_page: 1, next_page: null, from: 51, to: 51, total: 51 })

        const v3 = yield* groupsOf(admin, query(3), 3)
        expect(v3.status).toBe(200)
        expect(ids(v3)).toEqual(made.slice(40).map((group) => group.id))
        expect(objects(v3)[0]).toEqual({ ...made[40], created: expect.any(Number), modified: expect.any(Number) })
        expect(at(v3.body, "meta")).toMatchObject({
          current_page: 3, last_page: 3, from: 41, to: 51, per_page: 20, total: 51, path: `${yield* BaseUrl}/api/v3/groups`
        })
        const past = yield* groupsOf(admin, query(4), 3)
        expect(objects(past)).toEqual([])
        expect(at(past.body, "meta")).toMatchObject({ current_page: 4, total: 51, from: null })
        expect(at((yield* groupsOf(member, query(1))).body, "meta", "total")).toBe(27)
      })
    )

    it.effect("G1 refuses a missing or invalid domain_id (400 10101) or page (400 10408), an unknown or deleted domain (404 10101)", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const domainId = yield* newDomain(admin)
        yield* newGroup(domainId, { name: "soon gone", global: true })
        const refused = (query: string) =>
          Effect.map(groupsOf(admin, query), (reply) => ({ status: reply.status, codes: codes(reply) }))
        expect(yield* refused("")).toEqual({ status: 400, codes: [10101] })
        for (const bad of ["abc", "0", "-1", "1.5", "01", "", "99999999999999999999"]) {
          expect(yield* refused(`domain_id=${bad}`), bad).toEqual({ status: 400, codes: [10101] })
        }
        for (const bad of ["0", "x", "-2", "1.5"]) {
          expect(yield* refused(`domain_id=${domainId}&page=${bad}`), bad).toEqual({ status: 400, codes: [10408] })
        }
        expect(yield* refused("domain_id=x&page=0")).toEqual({ status: 400, codes: [10101, 10408] })
        expect(yield* refused("domain_id=999999999")).toEqual({ status: 404, codes: [10101] })
        expect((yield* call("GET", `/api/v4/groups?domain_id=${domainId}`)).status).toBe(401)

        const document = (yield* call("GET", "/api/v4/openapi.json")).body
        expect(documentedCodes(document, "/api/v4/groups", "get", "400")).toEqual(expect.arrayContaining([10101, 10408]))
        expect(documentedCodes(document, "/api/v4/groups", "get", "404")).toEqual([10101])

        expect(ids(yield* groupsOf(admin, `domain_id=${domainId}`))).toHaveLength(1)
        yield* deleteDomain(domainId)
        expect(yield* refused(`domain_id=${domainId}`)).toEqual({ status: 404, codes: [10101] })
      })
    )

    it.effect("requireVisible: a group of that domain the caller sees; GroupNotFound (10160) otherwise", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const stranger = yield* newUser()
        const domainId = yield* newDomain(admin)
        const otherDomainId = yield* newDomain(admin)
        const everyone = yield* newGroup(domainId, { name: "Everyone", global: true })
        const members = yield* newGroup(domainId, { name: "Members", users: [member.userId] })
        const adminOnly = yield* newGroup(domainId, { name: "Admin only" })
        const asAdmin = callerOf(admin)
        const asMember = callerOf(member, "member")

        expect(yield* visible(asMember, domainId, everyone.id)).toBe(true)
        expect(yield* visible(asMember, domainId, members.id)).toBe(true)
        expect(yield* visible(asAdmin, domainId, members.id)).toBe(true)
        expect(yield* visible(asMember, domainId, adminOnly.id)).toBe(false)
        expect(yield* visible(asAdmin, otherDomainId, everyone.id)).toBe(false)
        expect(yield* visible(asAdmin, domainId, 999_999_999)).toBe(false)
        expect(yield* visible(callerOf(stranger), domainId, everyone.id)).toBe(false)
        const failure = yield* Effect.flip(Effect.flatMap(Groups, (groups) => groups.requireVisible(asMember, domainId, adminOnly.id)))
        expect(failure).toMatchObject({ _tag: "GroupNotFound", code: 10160, status: 404, message: "group_id is invalid" })

        yield* deleteDomain(domainId)
        expect(yield* visible(asAdmin, domainId, everyone.id)).toBe(false)
      })
    )

    it.effect("adding a link or a user moves the group's modified once: adding it again changes nothing", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const groups = yield* Groups
        const admin = yield* newUser()
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const domainId = yield* newDomain(admin)
        const linkId = yield* newLink(admin, domainId)
        const group = yield* newGroup(domainId, { name: "Touched" })
        const hourAgo = Math.floor(Date.now() / 1000) - 3600
        const backdate = sql`UPDATE link_groups SET modified = to_timestamp(${hourAgo}) WHERE id = ${group.id}`
        const modified = Effect.map(groups.listAll(domainId), (found) => found[0]!.modified)

        for (const add of [groups.addLink(group.id, linkId), groups.addUser(group.id, member.userId)]) {
          yield* backdate
          yield* add
          expect(yield* modified).toBeGreaterThan(hourAgo + 3000)
          yield* backdate
          yield* add
          expect(yield* modified).toBe(hourAgo)
        }
        const links = yield* sql<{ link_id: number }>`SELECT link_id FROM link_group_links WHERE group_id = ${group.id}`
        expect(links).toEqual([{ link_id: linkId }])
        expect((yield* groups.listAll(domainId)).map((found) => found.users)).toEqual([[member.userId]])
      })
    )
  })
})

const PASSWORD_HASH = "$argon2id$v=19$m=19456,t=2,p=1$not-a-real-hash"

/** The database the CLI's commands open themselves, as the admin CLI does, and its settings. */
class CliDatabase extends Context.Tag("test/CliDatabase")<
  CliDatabase,
  { readonly config: Record<string, string>; readonly client: () => Layer.Layer<SqlClient.SqlClient, unknown> }
>() {}

const CliDatabaseLive = Layer.scoped(
  CliDatabase,
  Effect.gen(function* () {
    const dataDir = mkdtempSync(join(tmpdir(), "links-groups-cli-"))
    if (testServerUrl === undefined) return { config: { DATA_DIR: dataDir }, client: () => embeddedClientLayer(dataDir) }
    const { url } = yield* scopedServerDatabase(testServerUrl, "links_groups_cli")
    return {
      config: { DATA_DIR: dataDir, DATABASE_URL: url },
      client: () => serverClientLayer(Redacted.make(url), { maxConnections: 2, applicationName: "links-groups-cli-test" })
    }
  })
)

/** Opened only between commands: the embedded database admits one opener at a time. */
const withDatabase = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.flatMap(CliDatabase, (database) => Effect.provide(effect, database.client())).pipe(Effect.orDie)

/** A CLI command run as `npm run cli` runs it, on this describe's database. */
const run = (command: DatabaseCommand) =>
  Effect.flatMap(CliDatabase, (database) =>
    execute(command).pipe(Effect.provide(AppConfig.layerFromMap(database.config)), Effect.provide(Logger.minimumLogLevel(LogLevel.Warning)))
  )

/** The message of a refused command. */
const refusal = (command: DatabaseCommand) =>
  Effect.map(Effect.flip(run(command)), (error) => `${error._tag}: ${error.message}`)

/** Accounts A (an admin, then a member; two domains), B (one user, one domain) and C (a member only). */
const fixture = withDatabase(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* migrate
    const one = (rows: ReadonlyArray<{ readonly id: number }>) => rows[0]!.id
    const account = (name: string) => Effect.map(sql<{ id: number }>`INSERT INTO accounts (name, plan) VALUES (${name}, 'team') RETURNING id`, one)
    const user = (accountId: number, role: string) =>
      Effect.map(
        sql<{ id: number }>`
          INSERT INTO users (account_id, email, nickname, role, password_hash, refresh_token_hash)
          VALUES (${accountId}, ${`${randomBytes(6).toString("hex")}@example.com`}, 'fixture', ${role}, ${PASSWORD_HASH}, ${randomBytes(32)})
          RETURNING id`,
        one
      )
    const domain = (accountId: number) =>
      Effect.map(sql<{ id: number }>`INSERT INTO domains (account_id, domain) VALUES (${accountId}, ${`${randomBytes(6).toString("hex")}.example`}) RETURNING id`, one)
    const link = (domainId: number, userId: number, status: string) =>
      Effect.map(
        sql<{ id: number }>`
          INSERT INTO links (domain_id, user_id, url, alias, redirect_url, status)
          VALUES (${domainId}, ${userId}, 'https://example.com/', ${randomBytes(6).toString("hex")}, 'https://example.com/', ${status})
          RETURNING id`,
        one
      )
    const [a, b, c] = [yield* account("A"), yield* account("B"), yield* account("C")]
    const adminA = yield* user(a, "account_admin")
    const memberA = yield* user(a, "member")
    const userB = yield* user(b, "account_admin")
    const memberC = yield* user(c, "member")
    const [domainA, otherDomainA, domainB, domainC] = [yield* domain(a), yield* domain(a), yield* domain(b), yield* domain(c)]
    return {
      adminA, memberA, userB, memberC, domainA, otherDomainA, domainB, domainC,
      linkA: yield* link(domainA, memberA, "active"),
      deletedLinkA: yield* link(domainA, memberA, "deleted"),
      otherLinkA: yield* link(otherDomainA, adminA, "active")
    }
  })
).pipe(Effect.cached, Effect.runSync)

describe("admin CLI group commands", () => {
  it.effect("reads group commands; --user may be repeated on group create only", () =>
    Effect.gen(function* () {
      const read = (...args: ReadonlyArray<string>) => parseInvocation(args).command
      const refused = (...args: ReadonlyArray<string>) => Effect.map(Effect.flip(read(...args)), (error) => error.message)
      expect(yield* read("group", "create", "--domain", "3", "--name", " News ", "--user", "9", "--global", "--user=4", "--json")).toEqual(
        Command.GroupCreate({ domainId: 3, name: "News", global: true, owner: undefined, users: [9, 4] })
      )
      expect(yield* read("group", "create", "--domain", "3", "--name", "N", "--owner", "2")).toEqual(
        Command.GroupCreate({ domainId: 3, name: "N", global: false, owner: 2, users: [] })
      )
      expect(yield* read("group", "add-link", "--group", "5", "--link", "6")).toEqual(Command.GroupAddLink({ groupId: 5, linkId: 6 }))
      expect(yield* read("group", "add-user", "--group", "5", "--user", "7")).toEqual(Command.GroupAddUser({ groupId: 5, userId: 7 }))
      expect(yield* read("group", "list", "--domain", "3", "--json")).toEqual(Command.GroupList({ domainId: 3 }))

      const create = ["group", "create", "--domain", "3", "--name", "N"]
      expect(yield* refused(...create, "--owner", "1", "--owner", "2")).toBe("--owner is given twice")
      expect(yield* refused(...create, "--user", "1", "--user", "me")).toBe('--user must be a positive whole number, not "me"')
      expect(yield* refused(...create, "--global=yes")).toBe("--global takes no value")
      expect(yield* refused("group", "create", "--domain", "3", "--name", "x".repeat(201))).toBe("--name must have 1 to 200 characters")
      expect(yield* refused("group", "add-user", "--group", "5", "--user", "7", "--user", "8")).toBe("--user is given twice")
      expect(yield* refused("domain", "admin", "--user", "1", "--user", "2", "--domain", "3")).toBe("--user is given twice")
      expect(yield* refused("group", "add-link", "--group", "5")).toBe("group add-link needs --link")
      expect(yield* refused("group", "list", "--domain", "3", "--global")).toBe("--global is not an option of group list")
      expect(yield* refused("group", "delete", "--group", "5")).toBe('unknown command "group delete"')
    })
  )

  // Each command opens the database and its services, as a CLI process does.
  layer(CliDatabaseLive, { timeout: "120 seconds" })((it) => {
    it.effect("group create answers the group as G1 shows it; the owner defaults to the account's first admin", () =>
      Effect.gen(function* () {
        const f = yield* fixture
        const created = yield* run(Command.GroupCreate({ domainId: f.domainA, name: " News ", global: false, owner: undefined, users: [f.memberA, f.adminA, f.memberA] }))
        const id = numberAt(created.json, "id")
        expect(created.json).toEqual({
          id, name: "News", domain_id: f.domainA, user_id: f.adminA, is_global: "0", users: [f.adminA, f.memberA],
          created: expect.any(Number), modified: expect.any(Number)
        })
        expect(created.text).toBe(`created group ${id} "News" (owner user ${f.adminA}, users ${f.adminA}, ${f.memberA}) on domain ${f.domainA}`)
        const global = yield* run(Command.GroupCreate({ domainId: f.domainA, name: "All", global: true, owner: f.memberA, users: [] }))
        expect(global.json).toMatchObject({ name: "All", user_id: f.memberA, is_global: "1", users: [] })
        const elsewhere = yield* run(Command.GroupCreate({ domainId: f.otherDomainA, name: "news", global: false, owner: undefined, users: [] }))
        expect(elsewhere.json).toMatchObject({ name: "news", domain_id: f.otherDomainA })
      })
    )

    it.effect("group create refuses a taken name, an unknown or deleted domain, an owner or user of another account", () =>
      Effect.gen(function* () {
        const f = yield* fixture
        const create = (input: Partial<Omit<NewGroup, "name">> & { readonly name?: string }) =>
          refusal(Command.GroupCreate({ domainId: f.domainA, name: "Fresh", global: false, owner: undefined, users: [], ...input }))
        expect(yield* create({ name: "NEWS" })).toBe(
          `AdminError: domain ${f.domainA} already has a group named "NEWS" (names are unique per domain, ignoring case)`
        )
        expect(yield* create({ domainId: 999_999 })).toBe("AdminError: there is no domain 999999")
        expect(yield* create({ owner: f.userB })).toBe(`AdminError: the owner, user ${f.userB}, is not a user of the account of domain ${f.domainA}`)
        expect(yield* create({ users: [f.memberA, f.userB] })).toBe(`AdminError: user ${f.userB} is not a user of the account of domain ${f.domainA}`)
        expect(yield* create({ users: [f.userB, f.memberC] })).toBe(
          `AdminError: users ${f.userB}, ${f.memberC} are not users of the account of domain ${f.domainA}`
        )
        expect(yield* create({ name: " ".repeat(3) })).toBe("AdminError: the group name must have 1 to 200 characters")
        expect(yield* create({ domainId: f.domainC })).toBe(
          `AdminError: the account of domain ${f.domainC} has no account admin to own the group; name an owner`
        )
        expect((yield* run(Command.GroupCreate({ domainId: f.domainC, name: "C", global: false, owner: f.memberC, users: [] }))).json).toMatchObject({
          user_id: f.memberC
        })
        yield* withDatabase(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE domains SET status = 'deleted' WHERE id = ${f.domainC}`))
        expect(yield* create({ domainId: f.domainC, owner: f.memberC })).toBe(`AdminError: there is no domain ${f.domainC}`)
        expect(yield* refusal(Command.GroupList({ domainId: f.domainC }))).toBe(`AdminError: there is no domain ${f.domainC}`)
      })
    )

    it.effect("group add-link and add-user answer what they did, again when repeated; group list shows the domain's groups", () =>
      Effect.gen(function* () {
        const f = yield* fixture
        const [news, all] = (yield* run(Command.GroupList({ domainId: f.domainA }))).json["objects"] as ReadonlyArray<{ id: number }>
        const groupId = news!.id
        for (let i = 0; i < 2; i++) {
          const link = yield* run(Command.GroupAddLink({ groupId, linkId: f.linkA }))
          expect(link).toEqual({ json: { group_id: groupId, link_id: f.linkA }, text: `link ${f.linkA} is in group ${groupId}` })
          const user = yield* run(Command.GroupAddUser({ groupId: all!.id, userId: f.memberA }))
          expect(user).toEqual({ json: { group_id: all!.id, user_id: f.memberA }, text: `user ${f.memberA} sees group ${all!.id}` })
        }
        const notOnDomain = (linkId: number) => `AdminError: there is no link ${linkId} on domain ${f.domainA}, the domain of group ${groupId}`
        expect(yield* refusal(Command.GroupAddLink({ groupId, linkId: f.otherLinkA }))).toBe(notOnDomain(f.otherLinkA))
        expect(yield* refusal(Command.GroupAddLink({ groupId, linkId: f.deletedLinkA }))).toBe(notOnDomain(f.deletedLinkA))
        expect(yield* refusal(Command.GroupAddLink({ groupId: 999_999, linkId: f.linkA }))).toBe("AdminError: there is no group 999999")
        expect(yield* refusal(Command.GroupAddUser({ groupId, userId: f.userB }))).toBe(
          `AdminError: user ${f.userB} is not a user of the account of domain ${f.domainA}`
        )
        expect(yield* refusal(Command.GroupAddUser({ groupId: 999_999, userId: f.memberA }))).toBe("AdminError: there is no group 999999")

        const listed = yield* run(Command.GroupList({ domainId: f.domainA }))
        expect(listed.json).toEqual({
          objects: [
            expect.objectContaining({ id: groupId, name: "News", users: [f.adminA, f.memberA] }),
            expect.objectContaining({ id: all!.id, name: "All", is_global: "1", users: [f.memberA] })
          ]
        })
        // A table, as the other lists print without --json.
        expect(listed.text.split("\n").map((line) => line.split(/ {2,}/))).toEqual([
          ["id", "name", "owner", "seen_by"],
          [String(groupId), "News", String(f.adminA), `users ${f.adminA}, ${f.memberA}`],
          [String(all!.id), "All", String(f.memberA), "global"]
        ])
        const rows = yield* withDatabase(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ group_id: number; link_id: number }>`SELECT group_id, link_id FROM link_group_links`)
        )
        expect(rows).toEqual([{ group_id: groupId, link_id: f.linkA }])
        expect((yield* run(Command.GroupList({ domainId: f.domainB }))).text).toBe(`domain ${f.domainB} has no groups`)
      })
    )
  })
})
