import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { at, call, codes, newUser, type TestUser } from "./support/Http.ts"
import { newDomain as domainOf, newLink as link } from "./support/Fixtures.ts"
import { TestServer } from "./support/TestServer.ts"

const search = (user: TestUser, domainId: number, query = "") => call("GET", `/api/v4/${domainId}/links${query}`, { token: user.token })
const ids = (reply: { body: unknown }) => (at(reply.body, "objects") as ReadonlyArray<unknown>).map((l) => at(l, "id"))

describe("E6 search links", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("lists the caller's links oldest first with total, count, click_count and meta; order=latest reverses", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const created: Array<number> = []
        for (let i = 0; i < 3; i++) created.push(yield* link(user, domainId, { url: `https://example.com/${i}` }))
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE links SET click_count = id % 7 + 1 WHERE id IN ${sql.in(created)}`
        const reply = yield* search(user, domainId)
        expect(reply.status, reply.text).toBe(200)
        expect(ids(reply)).toEqual(created)
        expect(at(reply.body, "total")).toBe(3)
        expect(at(reply.body, "count")).toBe(3)
        expect(at(reply.body, "click_count")).toBe(created.reduce((sum, id) => sum + (id % 7) + 1, 0))
        expect(at(reply.body, "meta")).toMatchObject({ current_page: 1, per_page: 50, total: 3, from: 1, to: 3 })
        expect(ids(yield* search(user, domainId, "?order=latest"))).toEqual([...created].reverse())
        expect(codes(yield* search(user, domainId, "?order=newest"))).toEqual([10123])
      })
    )

    it.effect("keyword matches alias, notes and redirect URL ignoring case; url matches the normalised long URL", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const byAlias = yield* link(user, domainId, { url: "https://a.example/", alias: "SummerSale" })
        const byNotes = yield* link(user, domainId, { url: "https://b.example/", notes: "the summer campaign" })
        const byUrl = yield* link(user, domainId, { url: "https://summer.example/x" })
        yield* link(user, domainId, { url: "https://c.example/", notes: "winter" })
        expect(ids(yield* search(user, domainId, "?keyword=SUMMER"))).toEqual([byAlias, byNotes, byUrl])
        expect(ids(yield* search(user, domainId, "?keyword=%25"))).toEqual([])
        expect(ids(yield* search(user, domainId, `?url=${encodeURIComponent("https://SUMMER.example/x")}`))).toEqual([byUrl])
        expect(ids(yield* search(user, domainId, `?url=${encodeURIComponent("summer.example/x")}`))).toEqual([])
        expect(codes(yield* search(user, domainId, "?url=javascript:x"))).toEqual([10122])
        expect(codes(yield* search(user, domainId, `?keyword=${"k".repeat(201)}`))).toEqual([10121])
      })
    )

    it.effect("pages of 50; page must be a positive integer (10120)", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const created: Array<number> = []
        for (let i = 0; i < 53; i++) created.push(yield* link(user, domainId, { url: `https://example.com/p${i}` }))
        const page2 = yield* search(user, domainId, "?page=2")
        expect(ids(page2)).toEqual(created.slice(50))
        expect(at(page2.body, "total")).toBe(53)
        expect(at(page2.body, "count")).toBe(3)
        expect(at(page2.body, "meta")).toMatchObject({ current_page: 2, previous_page: 1, next_page: null, last_page: 2 })
        for (const page of ["0", "x", "-1"]) expect(codes(yield* search(user, domainId, `?page=${page}`))).toEqual([10120])
      })
    )

    it.effect("users=all shows every link of the domain to domain and account admins; members get 403 10003", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const domainId = yield* domainOf(admin)
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const mine = yield* link(admin, domainId, { url: "https://example.com/a" })
        const theirs = yield* link(member, domainId, { url: "https://example.com/b" })
        expect(ids(yield* search(admin, domainId))).toEqual([mine])
        expect(ids(yield* search(admin, domainId, "?users=all"))).toEqual([mine, theirs])
        expect(ids(yield* search(member, domainId))).toEqual([theirs])
        const refused = yield* search(member, domainId, "?users=all")
        expect(refused.status).toBe(403)
        expect(codes(refused)).toEqual([10003])
        const stranger = yield* newUser()
        expect(codes(yield* search(stranger, domainId))).toEqual([10101])
      })
    )

    it.effect("tag and created-time filters", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const tagged = yield* link(user, domainId, { url: "https://example.com/t", tags: [{ name: "Promo" }] })
        const old = yield* link(user, domainId, { url: "https://example.com/o" })
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE links SET created = created - interval '10 days' WHERE id = ${old}`
        expect(ids(yield* search(user, domainId, "?tag=promo"))).toEqual([tagged])
        const weekAgo = Math.floor(Date.now() / 1000) - 7 * 86400
        expect(ids(yield* search(user, domainId, `?from_unix=${weekAgo}`))).toEqual([tagged])
        expect(ids(yield* search(user, domainId, `?to_unix=${weekAgo}`))).toEqual([old])
        expect(codes(yield* search(user, domainId, "?from_unix=abc"))).toEqual([10500])
      })
    )

    it.effect("archived links stay listed; deleted ones vanish", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const archived = yield* link(user, domainId, { url: "https://example.com/a" })
        const deleted = yield* link(user, domainId, { url: "https://example.com/d" })
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE links SET status = 'archived' WHERE id = ${archived}`
        yield* sql`UPDATE links SET status = 'deleted' WHERE id = ${deleted}`
        const reply = yield* search(user, domainId)
        expect(ids(reply)).toEqual([archived])
        expect(at(reply.body, "objects", 0, "status")).toBe("archived")
      })
    )
  })
})
