import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { newDomain, newLink } from "./support/Fixtures.ts"
import { at, call, codes, newUser, numberAt, type TestUser } from "./support/Http.ts"
import { clicksOf, newShortDomain, visit } from "./support/Redirects.ts"
import { TestServer } from "./support/TestServer.ts"

const remove = (user: TestUser, domainId: number | string, prefix = "/api/v4") =>
  call("DELETE", `${prefix}/domains/${domainId}`, { token: user.token })

describe("D1 DELETE /domains/{domain_id}", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("an account admin deletes a domain and every link of it: gone from every read and from redirects; a second delete is 404", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const domain = yield* newShortDomain(admin, { homepage: "https://home.example/" })
        const linkId = yield* newLink(admin, domain.id, { url: "https://example.com/kept-clicks", alias: "gone" })
        expect((yield* visit(domain.name, "/gone")).status).toBe(301)
        expect(yield* clicksOf(linkId)).toHaveLength(1)

        const reply = yield* remove(admin, domain.id)
        expect([reply.status, reply.body]).toEqual([200, {}])

        for (const path of [`/domains/${domain.id}`, `/${domain.id}/links`, `/${domain.id}/links/${linkId}`, `/${domain.id}/links/exists?alias=gone`]) {
          const read = yield* call("GET", `/api/v4${path}`, { token: admin.token })
          expect([read.status, codes(read)], path).toEqual([404, [10101]])
        }
        const byName = yield* call("GET", `/api/v4/domains?domain_name=${domain.name}`, { token: admin.token })
        expect(codes(byName)).toEqual([10101])
        const listed = yield* call("GET", "/api/v4/domains", { token: admin.token })
        expect((at(listed.body, "objects") as ReadonlyArray<unknown>).map((d) => at(d, "id"))).not.toContain(domain.id)
        const created = yield* call("POST", `/api/v4/${domain.id}/links`, { token: admin.token, body: { url: "https://example.com/", override_404_check: 1 } })
        expect([created.status, codes(created)]).toEqual([404, [10101]])
        const report = yield* call("GET", `/api/v4/${domain.id}/clicks/daily`, { token: admin.token })
        expect([report.status, codes(report)]).toEqual([404, [10101]])

        // Neither the alias nor the homepage answers any more: the host is no short domain now.
        expect((yield* visit(domain.name, "/gone")).status).toBe(404)
        expect((yield* visit(domain.name, "/")).status).toBe(404)

        // The link is deleted with it, and its click stays on the account's records.
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ status: string }>`SELECT status FROM links WHERE id = ${linkId}`
        expect(row?.status).toBe("deleted")
        expect(yield* clicksOf(linkId)).toHaveLength(1)

        const again = yield* remove(admin, domain.id)
        expect([again.status, codes(again)]).toEqual([404, [10101]])
      })
    )

    it.effect("the name can be registered again: the new domain redirects its own links, never the old ones", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const old = yield* newShortDomain(admin)
        yield* newLink(admin, old.id, { url: "https://example.com/old", alias: "same" })
        yield* newLink(admin, old.id, { url: "https://example.com/only-old", alias: "only-old" })
        expect((yield* remove(admin, old.id)).status).toBe(200)

        const other = yield* newUser()
        const again = yield* call("POST", "/api/v4/domains", { token: other.token, body: { domain: old.name } })
        expect(again.status, again.text).toBe(200)
        const newId = numberAt(again.body, "objects", 0, "id")
        expect(newId).not.toBe(old.id)
        yield* newLink(other, newId, { url: "https://example.com/new", alias: "same" })
        const visited = yield* visit(old.name, "/same")
        expect([visited.status, visited.headers.location]).toEqual([301, "https://example.com/new"])
        expect((yield* visit(old.name, "/only-old")).status).toBe(404)
        // The old id stays deleted for its former account.
        expect(codes(yield* call("GET", `/api/v4/domains/${old.id}`, { token: admin.token }))).toEqual([10101])
        const taken = yield* call("POST", "/api/v4/domains", { token: admin.token, body: { domain: old.name } })
        expect(codes(taken)).toEqual([10401])
      })
    )

    it.effect("nothing else of the account changes: its other domains, their links and its users stay", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const kept = yield* newShortDomain(admin)
        const gone = yield* newDomain(admin)
        const keptLink = yield* newLink(member, kept.id, { url: "https://example.com/kept", alias: "kept" })
        yield* newLink(member, gone, { url: "https://example.com/gone" })
        expect((yield* remove(admin, gone)).status).toBe(200)

        const link = yield* call("GET", `/api/v4/${kept.id}/links/${keptLink}`, { token: member.token })
        expect([link.status, at(link.body, "objects", 0, "status")]).toEqual([200, "active"])
        expect((yield* visit(kept.name, "/kept")).status).toBe(301)
        const users = yield* call("GET", "/api/v4/users", { token: admin.token })
        expect((at(users.body, "objects") as ReadonlyArray<unknown>).map((u) => at(u, "user_id"))).toEqual([admin.userId, member.userId])
        expect(at(users.body, "objects", 1, "domains")).toEqual([{ id: kept.id, name: kept.name, role: "member" }])
        // The deleted domain's links no longer count against the quota.
        const sql = yield* SqlClient.SqlClient
        const [count] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM links l JOIN domains d ON d.id = l.domain_id
          WHERE d.account_id = ${admin.accountId} AND l.status <> 'deleted'`
        expect(count?.n).toBe(1)
      })
    )

    it.effect("members may not delete (403 10003); another account's or an unknown domain is 404 10101; a bad id is 404", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const stranger = yield* newUser()
        const domainId = yield* newDomain(admin)
        const refused = yield* remove(member, domainId)
        expect([refused.status, codes(refused)]).toEqual([403, [10003]])
        const foreign = yield* remove(stranger, domainId)
        expect([foreign.status, codes(foreign)]).toEqual([404, [10101]])
        expect(codes(yield* remove(admin, 999_999_999))).toEqual([10101])
        expect((yield* remove(admin, "abc")).status).toBe(404)
        const anonymous = yield* call("DELETE", `/api/v4/domains/${domainId}`)
        expect([anonymous.status, codes(anonymous)]).toEqual([401, [10000]])
        // Still there after all of them.
        expect((yield* call("GET", `/api/v4/domains/${domainId}`, { token: admin.token })).status).toBe(200)
      })
    )

    it.effect("version 3 deletes the same way under /api/v3", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const domainId = yield* newDomain(admin)
        const reply = yield* remove(admin, domainId, "/api/v3")
        expect([reply.status, reply.body]).toEqual([200, {}])
        expect(codes(yield* call("GET", `/api/v3/domains/${domainId}`, { token: admin.token }))).toEqual([10101])
      })
    )

    it.effect("a link created while its domain is being deleted is deleted with it or refused, never left behind", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const domainId = yield* newDomain(admin)
        const create = (n: number) =>
          call("POST", `/api/v4/${domainId}/links`, {
            token: admin.token,
            body: { url: `https://example.com/race/${n}`, override_404_check: 1 }
          })
        const replies = yield* Effect.all(
          [...Array.from({ length: 20 }, (_, n) => create(n)), Effect.delay(remove(admin, domainId), "5 millis")],
          { concurrency: "unbounded" }
        )
        for (const reply of replies) expect([200, 404]).toContain(reply.status)
        const sql = yield* SqlClient.SqlClient
        const [left] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM links WHERE domain_id = ${domainId} AND status <> 'deleted'`
        expect(left?.n).toBe(0)
      })
    )
  })
})
