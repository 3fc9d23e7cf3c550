import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Accounts } from "../src/Accounts/Accounts.ts"
import { newDomain } from "./support/Fixtures.ts"
import { at, call, codes, newUser, PASSWORD } from "./support/Http.ts"
import { TestServer } from "./support/TestServer.ts"

const domainName = (id: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(sql<{ domain: string }>`SELECT domain FROM domains WHERE id = ${id}`, (rows) => rows[0]?.domain))

describe("U1 GET /users", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("an account admin lists the account's users with names, e-mail, role and each domain's role", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const first = yield* newDomain(admin)
        const second = yield* newDomain(admin)
        const accounts = yield* Accounts
        const named = yield* accounts.createUser({
          accountId: admin.accountId,
          email: `ada.${Date.now()}@example.com`,
          password: PASSWORD,
          nickname: "ada",
          firstName: "Ada",
          lastName: "Lovelace",
          role: "member"
        })
        yield* accounts.makeDomainAdmin(named.user_id, second)
        yield* newUser() // another account's user: never listed

        const reply = yield* call("GET", "/api/v4/users", { token: admin.token })
        expect(reply.status, reply.text).toBe(200)
        const [firstName, secondName] = [yield* domainName(first), yield* domainName(second)]
        expect(at(reply.body, "objects")).toEqual([
          {
            user_id: admin.userId,
            email_address: admin.email,
            nickname: admin.email.split("@")[0],
            role: "account_admin",
            domains: [
              { id: first, name: firstName, role: "domain_admin" },
              { id: second, name: secondName, role: "domain_admin" }
            ]
          },
          {
            user_id: named.user_id,
            first_name: "Ada",
            last_name: "Lovelace",
            email_address: named.email,
            nickname: "ada",
            role: "member",
            domains: [
              { id: first, name: firstName, role: "member" },
              { id: second, name: secondName, role: "domain_admin" }
            ]
          }
        ])
        // Unset names are left out, never null.
        expect(at(reply.body, "objects", 0)).not.toHaveProperty("first_name")
        expect(at(reply.body, "meta")).toMatchObject({ current_page: 1, total: 2, per_page: 50, from: 1, to: 2, next_page: null, path: expect.stringMatching(/^http:\/\/[^/]+\/api\/v4\/users$/) })
      })
    )

    it.effect("members are refused with 403 10003; no token is 401 10000; a bad page is 400 10408", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const refused = yield* call("GET", "/api/v4/users", { token: member.token })
        expect([refused.status, codes(refused)]).toEqual([403, [10003]])
        const anonymous = yield* call("GET", "/api/v4/users")
        expect([anonymous.status, codes(anonymous)]).toEqual([401, [10000]])
        for (const page of ["0", "x", "1.5"]) {
          const bad = yield* call("GET", `/api/v4/users?page=${page}`, { token: admin.token })
          expect([bad.status, codes(bad)], page).toEqual([400, [10408]])
        }
      })
    )

    it.effect("pages of 50 in version 4 and of 20 in version 3", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const sql = yield* SqlClient.SqlClient
        // Users written directly: 54 logins through the password hash would only slow the test.
        for (let n = 0; n < 54; n++) {
          yield* sql`INSERT INTO users (account_id, email, nickname, role, password_hash, refresh_token_hash)
                     VALUES (${admin.accountId}, ${`bulk${n}.${Date.now()}@example.com`}, ${`bulk${n}`}, 'member', 'x', ${Buffer.from(`${admin.accountId}:${n}`)})`
        }
        const v4 = yield* call("GET", "/api/v4/users?page=2", { token: admin.token })
        expect((at(v4.body, "objects") as ReadonlyArray<unknown>).length).toBe(5)
        expect(at(v4.body, "meta")).toMatchObject({ current_page: 2, previous_page: 1, next_page: null, last_page: 2, per_page: 50, total: 55, from: 51, to: 55 })
        const v3 = yield* call("GET", "/api/v3/users?page=3", { token: admin.token })
        expect(v3.status, v3.text).toBe(200)
        expect((at(v3.body, "objects") as ReadonlyArray<unknown>).length).toBe(15)
        expect(at(v3.body, "meta")).toMatchObject({ current_page: 3, per_page: 20, last_page: 3, total: 55, path: expect.stringMatching(/\/api\/v3\/users$/) })
      })
    )
  })
})
