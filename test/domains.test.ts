import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Caller } from "../src/Accounts/User.ts"
import { Domains } from "../src/Domains/Domains.ts"
import { at, call, codes, newUser, numberAt, type TestUser } from "./support/Http.ts"
import { documentedCodes } from "./support/OpenApiShapes.ts"
import { newShortDomain, visit } from "./support/Redirects.ts"
import { TestServer } from "./support/TestServer.ts"

let serial = 0
const uniqueName = (prefix = "d") => `${prefix}${Date.now().toString(36)}${++serial}.example`

const createDomain = (user: TestUser, body: Record<string, unknown>) =>
  call("POST", "/api/v4/domains", { token: user.token, body })

const created = (user: TestUser, body: Record<string, unknown>) =>
  Effect.map(createDomain(user, body), (reply) => {
    if (reply.status !== 200) throw new Error(`create failed: ${reply.text}`)
    return numberAt(reply.body, "objects", 0, "id")
  })

describe("domains (E3, E7, E8, E9, E10)", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("E9 creates a domain with normalised name and URLs, answered as objects + meta", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const name = uniqueName()
        const reply = yield* createDomain(admin, {
          domain: `  ${name.toUpperCase()}. `,
          url_404: "https://Example.com/missing",
          homepage: "http://EXAMPLE.com"
        })
        expect(reply.status).toBe(200)
        const domain = at(reply.body, "objects", 0)
        expect(domain).toMatchObject({
          domain: name,
          default: false,
          type: "standard",
          status: "active",
          url_404: "https://example.com/missing",
          homepage: "http://example.com/",
          has_ssl: false
        })
        const now = Math.floor(Date.now() / 1000)
        expect(Math.abs(numberAt(domain, "created") - now)).toBeLessThanOrEqual(5)
        expect(numberAt(domain, "modified")).toBe(numberAt(domain, "created"))
        expect(at(reply.body, "meta")).toMatchObject({ current_page: 1, total: 1, per_page: 50, from: 1, to: 1 })
      })
    )

    it.effect("E9 stores an internationalised name as punycode and finds it by either spelling (E8)", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const suffix = `${Date.now().toString(36)}${++serial}`
        const reply = yield* createDomain(admin, { domain: `bücher.${suffix}.example` })
        expect(at(reply.body, "objects", 0, "domain")).toBe(`xn--bcher-kva.${suffix}.example`)
        for (const name of [`BÜCHER.${suffix}.example`, `xn--bcher-kva.${suffix}.example`]) {
          const found = yield* call("GET", `/api/v4/domains?domain_name=${encodeURIComponent(name)}`, { token: admin.token })
          expect(found.status).toBe(200)
          expect(at(found.body, "objects", 0, "id")).toBe(at(reply.body, "objects", 0, "id"))
        }
      })
    )

    it.effect("E9 refuses invalid names (10400), URLs (10402, 10403) and types, reporting every problem", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        for (const domain of ["", "nodot", "-bad.example", "bad-.example", "a..b", "1.2.3.4", "sho.rt/path", "sho.rt:8080",
          "http://sho.rt", "user@sho.rt", "sp ace.example", `${"a".repeat(64)}.example`, "x.123"]) {
          const reply = yield* createDomain(admin, { domain })
          expect(reply.status, domain).toBe(400)
          expect(codes(reply), domain).toEqual([10400])
        }
        const all = yield* createDomain(admin, { domain: "nodot", url_404: "ftp://x.example", homepage: "example.com" })
        expect(all.status).toBe(400)
        expect(codes(all)).toEqual([10400, 10402, 10403])
        const types = yield* createDomain(admin, { domain: 5, default: "yes", url_404: 3, homepage: [] })
        expect(types.status).toBe(400)
        expect(codes(types)).toEqual([10400, 10407, 10402, 10403])
        const missing = yield* createDomain(admin, {})
        expect(codes(missing)).toEqual([10400])
        for (const url of ["javascript:alert(1)", "https://user:pw@x.example/", "https:// x.example", "https://x.example/\r\nSet-Cookie:a"]) {
          const reply = yield* createDomain(admin, { domain: uniqueName(), homepage: url })
          expect(codes(reply), url).toEqual([10403])
        }
      })
    )

    it.effect("E9 refuses a name taken by any account, ignoring case (10401)", () =>
      Effect.gen(function* () {
        const first = yield* newUser()
        const other = yield* newUser()
        const name = uniqueName()
        yield* created(first, { domain: name })
        for (const [user, spelling] of [[first, name], [other, name.toUpperCase()]] as const) {
          const reply = yield* createDomain(user, { domain: spelling })
          expect(reply.status).toBe(400)
          expect(reply.body).toEqual({ errors: [{ code: 10401, message: `domain ${name} already exists` }] })
        }
      })
    )

    it.effect("only account admins create (E9) and update (E10) domains: members get 403 10003", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const id = yield* created(admin, { domain: uniqueName() })
        const create = yield* createDomain(member, { domain: uniqueName() })
        expect(create.status).toBe(403)
        expect(create.body).toEqual({ errors: [{ code: 10003, message: "Unauthorized" }] })
        const update = yield* call("PATCH", `/api/v4/domains/${id}`, {
          token: member.token,
          body: { op: "replace", path: "status", value: "disabled" }
        })
        expect(update.status).toBe(403)
        expect(codes(update)).toEqual([10003])
        const read = yield* call("GET", `/api/v4/domains/${id}`, { token: member.token })
        expect(read.status).toBe(200)
      })
    )

    it.effect("default: true makes the domain the caller's default, for the caller only", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const colleague = yield* newUser({ accountId: admin.accountId, role: "member" })
        const first = yield* created(admin, { domain: uniqueName(), default: true })
        const second = yield* created(admin, { domain: uniqueName(), default: true })
        const mine = yield* call("GET", "/api/v4/domains", { token: admin.token })
        const defaults = (at(mine.body, "objects") as ReadonlyArray<unknown>).map((d) => [at(d, "id"), at(d, "default")])
        expect(defaults).toEqual([[first, false], [second, true]])
        const theirs = yield* call("GET", "/api/v4/domains", { token: colleague.token })
        expect((at(theirs.body, "objects") as ReadonlyArray<unknown>).map((d) => at(d, "default"))).toEqual([false, false])
      })
    )

    it.effect("E3 lists the account's active domains, 50 a page, with meta", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const ids: Array<number> = []
        for (let i = 0; i < 53; i++) ids.push(yield* created(admin, { domain: uniqueName("p") }))
        yield* call("PATCH", `/api/v4/domains/${ids[0]}`, {
          token: admin.token,
          body: { op: "replace", path: "status", value: "disabled" }
        })
        const page1 = yield* call("GET", "/api/v4/domains", { token: admin.token })
        expect(page1.status).toBe(200)
        expect((at(page1.body, "objects") as ReadonlyArray<unknown>).length).toBe(50)
        expect(at(page1.body, "objects", 0, "id")).toBe(ids[1])
        expect(at(page1.body, "meta")).toMatchObject({
          current_page: 1, previous_page: null, next_page: 2, last_page: 2, from: 1, to: 50, per_page: 50, total: 52
        })
        expect(String(at(page1.body, "meta", "path"))).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v4\/domains$/)
        const page2 = yield* call("GET", "/api/v4/domains?page=2", { token: admin.token })
        expect((at(page2.body, "objects") as ReadonlyArray<unknown>).map((d) => at(d, "id"))).toEqual(ids.slice(51))
        expect(at(page2.body, "meta")).toMatchObject({ current_page: 2, previous_page: 1, next_page: null, from: 51, to: 52 })
        const page9 = yield* call("GET", "/api/v4/domains?page=9", { token: admin.token })
        expect(at(page9.body, "objects")).toEqual([])
        expect(at(page9.body, "meta")).toMatchObject({ current_page: 9, from: null, to: null, total: 52, next_page: null })
        for (const page of ["0", "-1", "abc", "1.5", ""]) {
          const bad = yield* call("GET", `/api/v4/domains?page=${page}`, { token: admin.token })
          expect(bad.status, page).toBe(400)
          expect(codes(bad), page).toEqual([10408])
        }
      })
    )

    it.effect("nothing of another account is visible: E3 omits it, E7 / E8 / E10 answer 404 10101", () =>
      Effect.gen(function* () {
        const owner = yield* newUser()
        const stranger = yield* newUser()
        const name = uniqueName()
        const id = yield* created(owner, { domain: name })
        const list = yield* call("GET", "/api/v4/domains", { token: stranger.token })
        expect(at(list.body, "objects")).toEqual([])
        const replies = [
          yield* call("GET", `/api/v4/domains/${id}`, { token: stranger.token }),
          yield* call("GET", `/api/v4/domains?domain_name=${name}`, { token: stranger.token }),
          yield* call("PATCH", `/api/v4/domains/${id}`, {
            token: stranger.token,
            body: { op: "replace", path: "status", value: "disabled" }
          }),
          yield* call("GET", `/api/v4/domains/999999999`, { token: stranger.token })
        ]
        for (const reply of replies) {
          expect(reply.status).toBe(404)
          expect(reply.body).toEqual({ errors: [{ code: 10101, message: "domain_id is invalid" }] })
        }
        const owned = yield* call("GET", `/api/v4/domains/${id}`, { token: owner.token })
        expect(at(owned.body, "objects", 0, "domain")).toBe(name)
      })
    )

    it.effect("E7 answers a non-numeric or non-positive id with 404 10101", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        for (const id of ["abc", "0", "-3", "1.5", "1e3", "99999999999999999999"]) {
          const reply = yield* call("GET", `/api/v4/domains/${id}`, { token: admin.token })
          expect(reply.status, id).toBe(404)
          expect(codes(reply), id).toEqual([10101])
        }
      })
    )

    it.effect("E10 replaces status, homepage and url_404, changes modified, and disabled domains leave E3", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const sql = yield* SqlClient.SqlClient
        const id = yield* created(admin, { domain: uniqueName(), homepage: "https://home.example" })
        yield* sql`UPDATE domains SET created = created - interval '1 hour', modified = modified - interval '1 hour' WHERE id = ${id}`
        const patch = (body: unknown) => call("PATCH", `/api/v4/domains/${id}`, { token: admin.token, body })
        const disabled = yield* patch({ op: "replace", path: "status", value: "disabled" })
        expect(disabled.status).toBe(200)
        const domain = at(disabled.body, "objects", 0)
        expect(at(domain, "status")).toBe("disabled")
        expect(numberAt(domain, "modified") - numberAt(domain, "created")).toBeGreaterThanOrEqual(3599)
        expect(at((yield* call("GET", "/api/v4/domains", { token: admin.token })).body, "objects")).toEqual([])
        expect((yield* call("GET", `/api/v4/domains/${id}`, { token: admin.token })).status).toBe(200)
        const active = yield* patch({ op: "replace", path: "status", value: "active" })
        expect(at(active.body, "objects", 0, "status")).toBe("active")
        const homepage = yield* patch({ op: "replace", path: "homepage", value: "https://New.example/x" })
        expect(at(homepage.body, "objects", 0, "homepage")).toBe("https://new.example/x")
        const url404 = yield* patch({ op: "replace", path: "url_404", value: "https://nf.example/" })
        expect(at(url404.body, "objects", 0, "url_404")).toBe("https://nf.example/")
        const cleared = yield* patch({ op: "replace", path: "url_404", value: null })
        expect(at(cleared.body, "objects", 0)).not.toHaveProperty("url_404")
      })
    )

    it.effect("E10 refuses other operations (10404), paths (10405) and values (10406)", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const id = yield* created(admin, { domain: uniqueName() })
        const patch = (body: unknown) => call("PATCH", `/api/v4/domains/${id}`, { token: admin.token, body })
        const cases: ReadonlyArray<readonly [unknown, number, string]> = [
          [{ op: "add", path: "status", value: "active" }, 10404, "Operation given in op not supported"],
          [{ op: "remove", path: "homepage" }, 10404, "Operation given in op not supported"],
          [{ op: "replace", path: "/status", value: "active" }, 10405, "Modifying path given in path not supported"],
          [{ op: "replace", path: "domain", value: "x.example" }, 10405, "Modifying path given in path not supported"],
          [{ op: "replace", path: "status", value: "deleted" }, 10406, "invalid value for status"],
          [{ op: "replace", path: "status", value: null }, 10406, "invalid value for status"],
          [{ op: "replace", path: "homepage", value: "not a url" }, 10406, "invalid value for homepage"],
          [{ op: "replace", path: "url_404", value: "mailto:a@b.example" }, 10406, "invalid value for url_404"]
        ]
        for (const [body, code, message] of cases) {
          const reply = yield* patch(body)
          expect(reply.status, JSON.stringify(body)).toBe(400)
          expect(reply.body, JSON.stringify(body)).toEqual({ errors: [{ code, message }] })
        }
        for (const body of [[{ op: "replace", path: "status", value: "active" }], {}, { op: 1, path: 2, value: 3 }]) {
          const reply = yield* patch(body)
          expect(reply.status, JSON.stringify(body)).toBe(400)
          expect(codes(reply).length).toBeGreaterThan(0)
        }
        const unchanged = yield* call("GET", `/api/v4/domains/${id}`, { token: admin.token })
        expect(at(unchanged.body, "objects", 0, "status")).toBe("active")
      })
    )

    it.effect("the OpenAPI document lists, per operation, the codes each status can carry", () =>
      Effect.gen(function* () {
        const document = (yield* call("GET", "/api/v4/openapi.json")).body
        expect(documentedCodes(document, "/api/v4/domains", "post", "400")).toEqual(
          expect.arrayContaining([10153, 10400, 10401, 10402, 10403, 10407])
        )
        expect(documentedCodes(document, "/api/v4/domains", "post", "403")).toContain(10003)
        expect(documentedCodes(document, "/api/v4/domains/{domain_id}", "patch", "400")).toEqual(
          expect.arrayContaining([10404, 10405, 10406])
        )
        expect(documentedCodes(document, "/api/v4/domains/{domain_id}", "patch", "404")).toContain(10101)
        expect(documentedCodes(document, "/api/v4/domains/{domain_id}", "get", "404")).toContain(10101)
      })
    )

    it.effect("the Domains service is usable without HTTP: failures are tagged, with their code and message", () =>
      Effect.gen(function* () {
        const domains = yield* Domains
        const admin = yield* newUser()
        const caller: Caller = {
          userId: admin.userId,
          accountId: admin.accountId,
          email: admin.email,
          nickname: "admin",
          role: "account_admin",
          plan: "enterprise",
          linkQuota: null
        }
        const name = uniqueName("svc")
        const domain = yield* domains.create(caller, { domain: name, homepage: "https://example.com" })
        expect(domain).toMatchObject({ domain: name, homepage: "https://example.com/" })
        const taken = yield* Effect.flip(domains.create(caller, { domain: name }))
        expect(taken).toMatchObject({ _tag: "DomainExists", code: 10401, message: `domain ${name} already exists` })
        const invalid = yield* Effect.flip(domains.create(caller, { domain: "nodot", url_404: "ftp://x" }))
        expect(invalid).toMatchObject({ _tag: "InvalidInput", problems: [{ code: 10400 }, { code: 10402 }] })
        const missing = yield* domains.byId(caller, domain.id + 1_000_000).pipe(
          Effect.as("found"),
          Effect.catchTag("DomainNotFound", (failure) => Effect.succeed(failure.code))
        )
        expect(missing).toBe(10101)
      })
    )
    it.effect("without DEFAULT_URL_404 and DEFAULT_HOMEPAGE a domain created without them leaves both out, never null", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const reply = yield* createDomain(admin, { domain: uniqueName("bare") })
        expect(reply.status, reply.text).toBe(200)
        expect(at(reply.body, "objects", 0)).not.toHaveProperty("url_404")
        expect(at(reply.body, "objects", 0)).not.toHaveProperty("homepage")
      })
    )
  })
})

describe("domain defaults (DEFAULT_URL_404, DEFAULT_HOMEPAGE)", () => {
  layer(TestServer({ DEFAULT_URL_404: "https://Help.example/not-found", DEFAULT_HOMEPAGE: "https://home.example" }), {
    excludeTestServices: true
  })((it) => {
    it.effect("fill a domain created without them; given values win; an explicit null or empty string means none", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const defaulted = yield* createDomain(admin, { domain: uniqueName("def") })
        expect(at(defaulted.body, "objects", 0)).toMatchObject({
          url_404: "https://help.example/not-found",
          homepage: "https://home.example/"
        })
        const given = yield* createDomain(admin, { domain: uniqueName("own"), homepage: "https://own.example/" })
        expect(at(given.body, "objects", 0)).toMatchObject({ url_404: "https://help.example/not-found", homepage: "https://own.example/" })
        const none = yield* createDomain(admin, { domain: uniqueName("none"), url_404: null, homepage: "" })
        expect(at(none.body, "objects", 0)).not.toHaveProperty("url_404")
        expect(at(none.body, "objects", 0)).not.toHaveProperty("homepage")
      })
    )

    it.effect("the defaults are the domain's own values: its redirects use them", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const domain = yield* newShortDomain(admin)
        const home = yield* visit(domain.name, "/")
        expect([home.status, home.headers.location]).toEqual([302, "https://home.example/"])
        const missing = yield* visit(domain.name, "/no-such-alias")
        expect([missing.status, missing.headers.location]).toEqual([302, "https://help.example/not-found"])
      })
    )
  })
})
