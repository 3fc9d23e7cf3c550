import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { newDomain, newLink } from "./support/Fixtures.ts"
import { call, codes, newUser, type TestUser } from "./support/Http.ts"
import { TestServer } from "./support/TestServer.ts"

const search = (user: TestUser, domainId: number, query = "") =>
  call("GET", `/api/v4/${domainId}/links${query}`, { token: user.token })
const create = (user: TestUser, domainId: number) =>
  call("POST", `/api/v4/${domainId}/links`, { token: user.token, body: { url: "https://example.com/", override_404_check: 1 } })

// The caller's view of a domain is cached per instance (src/Domains/DomainAccess.ts). Each test first
// makes a request that caches it, then changes the database behind the API's back: only the
// change announcements (sql/0004, sql/0006, sql/0007) can make the next request see it.
describe("the cached view of a domain follows the database at once", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("a domain disabled, and enabled again, in SQL: links can no longer be made, then can", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const admin = yield* newUser()
        const domainId = yield* newDomain(admin)
        expect((yield* create(admin, domainId)).status).toBe(200)
        yield* sql`UPDATE domains SET status = 'disabled' WHERE id = ${domainId}`
        const refused = yield* create(admin, domainId)
        expect([refused.status, codes(refused)]).toEqual([404, [10101]])
        expect((yield* search(admin, domainId)).status).toBe(200)
        yield* sql`UPDATE domains SET status = 'active' WHERE id = ${domainId}`
        expect((yield* create(admin, domainId)).status).toBe(200)
      })
    )

    it.effect("a member made, then unmade, admin of the domain in SQL sees all links, then only their own", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const admin = yield* newUser()
        const domainId = yield* newDomain(admin)
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        yield* newLink(admin, domainId, { url: "https://example.com/a" })
        expect((yield* search(member, domainId, "?users=all")).status).toBe(403)
        yield* sql`INSERT INTO domain_admins (user_id, domain_id) VALUES (${member.userId}, ${domainId})`
        expect((yield* search(member, domainId, "?users=all")).status).toBe(200)
        yield* sql`DELETE FROM domain_admins WHERE user_id = ${member.userId}`
        expect(codes(yield* search(member, domainId, "?users=all"))).toEqual([10003])
      })
    )

    it.effect("a domain moved to another account in SQL is gone for the first and there for the second", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const first = yield* newUser()
        const second = yield* newUser()
        const domainId = yield* newDomain(first)
        expect((yield* search(first, domainId)).status).toBe(200)
        expect(codes(yield* search(second, domainId))).toEqual([10101])
        yield* sql`UPDATE domains SET account_id = ${second.accountId} WHERE id = ${domainId}`
        expect(codes(yield* search(first, domainId))).toEqual([10101])
        expect((yield* search(second, domainId)).status).toBe(200)
      })
    )

    it.effect("a member made account admin in SQL sees all links at once", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const admin = yield* newUser()
        const domainId = yield* newDomain(admin)
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        expect((yield* search(member, domainId, "?users=all")).status).toBe(403)
        yield* sql`UPDATE users SET role = 'account_admin' WHERE id = ${member.userId}`
        expect((yield* search(member, domainId, "?users=all")).status).toBe(200)
      })
    )
  })
})
