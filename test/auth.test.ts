import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { createHash, createHmac, randomBytes } from "node:crypto"
import { UserRepo } from "../src/Accounts/UserRepo.ts"
import { Sessions } from "../src/Auth/Sessions.ts"
import { TokenSecret, TokenStore } from "../src/Auth/TokenStore.ts"
import { call, codes, newUser, numberAt, PASSWORD, type Reply, stringAt, type TestUser } from "./support/Http.ts"
import { documentedCodes } from "./support/OpenApiShapes.ts"
import { TestServer } from "./support/TestServer.ts"

/**
 * A second access token of the user, made with this instance's token secret (as another instance
 * sharing TOKEN_SECRET would make one): valid here, and what E2 hands back while it lasts.
 */
const secondToken = (user: TestUser) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const seed = randomBytes(32)
    const token = createHmac("sha256", (yield* TokenSecret).current()).update(seed).digest("base64url")
    const hash = createHash("sha256").update(token).digest()
    yield* sql`INSERT INTO access_tokens (token_hash, seed, user_id, expires)
      VALUES (${hash}, ${seed}, ${user.userId}, now() + interval '1 day')`
    return token
  }).pipe(Effect.orDie)

const INVALID_TOKEN = { errors: [{ code: 10000, message: "invalid token" }] }

/** What an authenticated read answers to `token`: 200, or the 401 and its body. */
const used = (token: string) =>
  Effect.map(call("GET", "/api/v4/domains", { token }), (reply) => (reply.status === 200 ? 200 : [reply.status, reply.body]))

const login = (email: string, password: string) => call("POST", "/api/v4/access_token", { body: { email, password } })

const refusedLogin = (email: string) => [401, { success: 0, errors: [{ code: 10001, message: `${email} may not be registered` }] }]

const answer = (reply: Reply) => [reply.status, reply.body]

describe("authentication (E1, E2, bearer tokens)", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("E1 accepts the right password and answers the user", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const reply = yield* call("POST", "/api/v4/validate_login", { body: { email: user.email, password: PASSWORD } })
        expect(reply.status).toBe(200)
        expect(reply.body).toEqual({
          success: 1,
          user: { user_id: user.userId, nickname: user.email.split("@")[0], email: user.email }
        })
      })
    )

    it.effect("E1 and E2 answer an unknown e-mail and a wrong password identically", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        for (const path of ["/api/v4/validate_login", "/api/v4/access_token"]) {
          const wrong = yield* call("POST", path, { body: { email: user.email, password: "wrong password!" } })
          const unknown = yield* call("POST", path, { body: { email: "nobody@example.com", password: "wrong password!" } })
          expect(wrong.status).toBe(401)
          expect(unknown.status).toBe(401)
          expect(wrong.body).toEqual({ success: 0, errors: [{ code: 10001, message: `${user.email} may not be registered` }] })
          expect(unknown.body).toEqual({ success: 0, errors: [{ code: 10001, message: "nobody@example.com may not be registered" }] })
        }
      })
    )

    it.effect("E1 refuses missing, empty, non-string and over-long credentials with 10001", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const bodies = [
          {},
          { email: user.email },
          { email: user.email, password: "" },
          { email: user.email, password: 12345 },
          { email: 42, password: PASSWORD },
          { email: user.email, password: "x".repeat(5000) }
        ]
        for (const body of bodies) {
          const reply = yield* call("POST", "/api/v4/validate_login", { body })
          expect(reply.status).toBe(401)
          expect(codes(reply)).toEqual([10001])
        }
        // The message names the e-mail; one left out or empty is said so, not "" before the sentence.
        for (const path of ["/api/v4/validate_login", "/api/v4/access_token"]) {
          for (const body of [{}, { email: "  ", password: PASSWORD }]) {
            const reply = yield* call("POST", path, { body })
            expect(reply.body, path).toEqual({ success: 0, errors: [{ code: 10001, message: "an empty e-mail may not be registered" }] })
          }
        }
      })
    )

    it.effect("E1 matches the e-mail ignoring case", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const reply = yield* call("POST", "/api/v4/validate_login", {
          body: { email: user.email.toUpperCase(), password: PASSWORD }
        })
        expect(reply.status).toBe(200)
      })
    )

    it.effect("E2 returns the same token while it is valid, with a 24 h expiry", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const first = yield* call("POST", "/api/v4/access_token", { body: { email: user.email, password: PASSWORD } })
        const second = yield* call("POST", "/api/v4/access_token", { body: { email: user.email, password: PASSWORD } })
        expect(first.status).toBe(200)
        expect(stringAt(first.body, "access_token")).toBe(user.token)
        expect(stringAt(second.body, "access_token")).toBe(user.token)
        expect(Buffer.from(user.token, "base64url").length).toBeGreaterThanOrEqual(32)
        const now = Math.floor(Date.now() / 1000)
        const expires = numberAt(first.body, "expires")
        expect(expires).toBeGreaterThan(now + 24 * 3600 - 60)
        expect(expires).toBeLessThanOrEqual(now + 24 * 3600)
        expect(first.body).toMatchObject({ success: 1, user: { user_id: user.userId, email: user.email } })
      })
    )

    it.effect("E2 issues a new token once the old one has expired, and the old one stops working", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        // Used once first, so that the service knows (and caches) its owner.
        expect((yield* call("GET", "/api/v4/domains", { token: user.token })).status).toBe(200)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE access_tokens SET expires = now() - interval '1 second' WHERE user_id = ${user.userId}`
        const expired = yield* call("GET", "/api/v4/domains", { token: user.token })
        expect(expired.status).toBe(401)
        expect(codes(expired)).toEqual([10000])
        const renewed = yield* call("POST", "/api/v4/access_token", { body: { email: user.email, password: PASSWORD } })
        const token = stringAt(renewed.body, "access_token")
        expect(token).not.toBe(user.token)
        expect((yield* call("GET", "/api/v4/domains", { token })).status).toBe(200)
      })
    )

    it.effect("E2 accepts the refresh token in place of the password, and only the current one", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const reply = yield* call("POST", "/api/v4/access_token", { body: { email: user.email, refresh_token: user.refreshToken } })
        expect(reply.status).toBe(200)
        expect(stringAt(reply.body, "access_token")).toBe(user.token)
        const wrong = yield* call("POST", "/api/v4/access_token", { body: { email: user.email, refresh_token: "nope" } })
        expect(wrong.status).toBe(401)
        expect(codes(wrong)).toEqual([10001])
        const other = yield* newUser()
        const crossed = yield* call("POST", "/api/v4/access_token", { body: { email: user.email, refresh_token: other.refreshToken } })
        expect(crossed.status).toBe(401)
      })
    )

    it.effect("the database holds no usable password or token", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ password_hash: string; refresh_token_hash: Uint8Array }>`
          SELECT password_hash, refresh_token_hash FROM users WHERE id = ${user.userId}`
        expect(row!.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
        expect(Buffer.from(row!.refresh_token_hash).toString("hex")).toBe(
          createHash("sha256").update(user.refreshToken).digest("hex")
        )
        const tokens = yield* sql<{ token_hash: Uint8Array; seed: Uint8Array }>`
          SELECT token_hash, seed FROM access_tokens WHERE user_id = ${user.userId}`
        expect(tokens.length).toBe(1)
        const stored = [tokens[0]!.token_hash, tokens[0]!.seed].map((b) => Buffer.from(b))
        for (const value of stored) {
          expect(value.toString("base64url")).not.toBe(user.token)
          const replay = yield* call("GET", "/api/v4/domains", { token: value.toString("base64url") })
          expect(replay.status).toBe(401)
        }
      })
    )

    it.effect("every authenticated endpoint refuses a missing, malformed or unknown token with 10000", () =>
      Effect.gen(function* () {
        const headers = [{}, { authorization: "Bearer" }, { authorization: "Basic abc" }, { authorization: "Bearer not-a-token" }]
        for (const [method, path] of [
          ["GET", "/api/v4/domains"],
          ["GET", "/api/v4/domains/1"],
          ["POST", "/api/v4/domains"],
          ["PATCH", "/api/v4/domains/1"],
          ["GET", "/api/v4/error_codes"]
        ] as const) {
          for (const h of headers) {
            const reply = yield* call(method, path, { headers: h })
            expect(reply.status).toBe(401)
            expect(reply.body).toEqual({ errors: [{ code: 10000, message: "invalid token" }] })
          }
        }
      })
    )

    it.effect("the OpenAPI document lists, per operation, the codes each status can carry", () =>
      Effect.gen(function* () {
        const document = (yield* call("GET", "/api/v4/openapi.json")).body
        for (const path of ["/api/v4/access_token", "/api/v4/validate_login"]) {
          expect(documentedCodes(document, path, "post", "401"), path).toEqual([10001])
          // 10901 from the login hashing queue; the rate limit, the database and a stopping instance at the edge.
          expect(documentedCodes(document, path, "post", "503"), path).toEqual([10900, 10901, 10902, 10903])
          expect(documentedCodes(document, path, "post", "400"), path).toEqual([10153])
        }
        expect(documentedCodes(document, "/api/v4/domains", "get", "401")).toEqual([10000])
      })
    )

    it.effect("the Sessions service is usable without HTTP: failures are tagged, with their code and message", () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const user = yield* newUser()
        const session = yield* sessions.accessToken({ email: user.email, refreshToken: user.refreshToken })
        expect(session).toMatchObject({ accessToken: user.token, user: { user_id: user.userId, email: user.email } })
        const refused = yield* sessions.validateLogin(user.email, "wrong password!").pipe(
          Effect.as("accepted"),
          Effect.catchTag("InvalidCredentials", (failure) => Effect.succeed(`${failure.code} ${failure.message}`))
        )
        expect(refused).toBe(`10001 ${user.email} may not be registered`)
        const rotated = yield* sessions.rotateRefreshToken(user.email)
        const old = yield* Effect.flip(sessions.accessToken({ email: user.email, refreshToken: user.refreshToken }))
        expect(old).toMatchObject({ _tag: "InvalidCredentials", code: 10001 })
        const renewed = yield* sessions.accessToken({ email: user.email, refreshToken: rotated.refresh_token })
        expect(renewed.accessToken).not.toBe(user.token)
        const unknown = yield* Effect.flip(sessions.rotateRefreshToken("nobody@example.com"))
        expect(unknown).toMatchObject({ _tag: "UnknownUser", message: "there is no user with the e-mail nobody@example.com" })
      })
    )

    it.effect("DELETE /access_token (v4 and v3) revokes the token presented and no other; E2 then hands back the other, or issues a new one", () =>
      Effect.gen(function* () {
        for (const version of ["v4", "v3"]) {
          const user = yield* newUser()
          const other = yield* secondToken(user)
          // Both used first, so that the service knows (and caches) their owner.
          expect(yield* used(user.token)).toBe(200)
          expect(yield* used(other)).toBe(200)
          const revoked = yield* call("DELETE", `/api/${version}/access_token`, { token: user.token })
          expect(answer(revoked), version).toEqual([200, { success: 1 }])
          expect(yield* used(user.token), version).toEqual([401, INVALID_TOKEN])
          expect(answer(yield* call("DELETE", `/api/${version}/access_token`, { token: user.token }))).toEqual([401, INVALID_TOKEN])
          expect(yield* used(other), version).toBe(200)
          expect(stringAt((yield* login(user.email, PASSWORD)).body, "access_token"), version).toBe(other)
          expect(answer(yield* call("DELETE", `/api/${version}/access_token`, { token: other }))).toEqual([200, { success: 1 }])
          const renewed = stringAt((yield* login(user.email, PASSWORD)).body, "access_token")
          expect([user.token, other]).not.toContain(renewed)
          expect(yield* used(renewed), version).toBe(200)
          expect(answer(yield* call("DELETE", `/api/${version}/access_token`))).toEqual([401, INVALID_TOKEN])
        }
        const document = (yield* call("GET", "/api/v4/openapi.json")).body
        expect(documentedCodes(document, "/api/v4/access_token", "delete", "401")).toEqual([10000])
      })
    )

    it.effect("rotating the refresh token or changing the password revokes every access token of the user at once", () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const rotating = yield* newUser()
        const others = [yield* secondToken(rotating)]
        for (const token of [rotating.token, ...others]) expect(yield* used(token)).toBe(200)
        const rotated = yield* sessions.rotateRefreshToken(rotating.email)
        for (const token of [rotating.token, ...others]) expect(yield* used(token)).toEqual([401, INVALID_TOKEN])
        const renewed = yield* call("POST", "/api/v4/access_token", { body: { email: rotating.email, refresh_token: rotated.refresh_token } })
        expect(stringAt(renewed.body, "access_token")).not.toBe(rotating.token)
        expect(yield* used(stringAt(renewed.body, "access_token"))).toBe(200)

        const changing = yield* newUser()
        expect(yield* used(changing.token)).toBe(200)
        const password = "a brand new passphrase"
        expect(yield* sessions.changePassword(changing.email.toUpperCase(), password)).toEqual({ user_id: changing.userId, email: changing.email })
        expect(yield* used(changing.token)).toEqual([401, INVALID_TOKEN])
        expect(answer(yield* login(changing.email, PASSWORD))).toEqual(refusedLogin(changing.email))
        const fresh = stringAt((yield* login(changing.email, password)).body, "access_token")
        expect(fresh).not.toBe(changing.token)
        expect(yield* used(fresh)).toBe(200)

        const weak = yield* Effect.flip(sessions.changePassword(changing.email, "short"))
        expect(weak).toMatchObject({ _tag: "WeakPassword", message: "the password must have at least 10 characters" })
        expect(yield* Effect.flip(sessions.changePassword("nobody@example.com", password))).toMatchObject({ _tag: "UnknownUser" })
        expect(yield* used(fresh)).toBe(200)
      })
    )

    it.effect("a disabled user cannot log in (the same 401 10001 as wrong credentials) and their tokens are refused at once; enable restores login", () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const user = yield* newUser()
        expect(yield* used(user.token)).toBe(200)
        expect(yield* sessions.disable(user.email)).toEqual({ user_id: user.userId, email: user.email, disabled: true })
        expect(yield* used(user.token)).toEqual([401, INVALID_TOKEN])
        for (const path of ["/api/v4/validate_login", "/api/v4/access_token"]) {
          const refused = yield* call("POST", path, { body: { email: user.email, password: PASSWORD } })
          expect(answer(refused), path).toEqual(refusedLogin(user.email))
        }
        const byRefreshToken = yield* call("POST", "/api/v4/access_token", { body: { email: user.email, refresh_token: user.refreshToken } })
        expect(answer(byRefreshToken)).toEqual(refusedLogin(user.email))

        expect(yield* sessions.enable(user.email)).toEqual({ user_id: user.userId, email: user.email, disabled: false })
        expect(yield* used(user.token)).toEqual([401, INVALID_TOKEN])
        const token = stringAt((yield* login(user.email, PASSWORD)).body, "access_token")
        expect(token).not.toBe(user.token)
        expect(yield* used(token)).toBe(200)

        // Disabled by hand in SQL, tokens left in place: refused at once all the same.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE users SET disabled = true WHERE id = ${user.userId}`
        expect(yield* used(token)).toEqual([401, INVALID_TOKEN])
        yield* sql`UPDATE users SET disabled = false WHERE id = ${user.userId}`
        expect(yield* used(token)).toBe(200)
      })
    )

    it.effect("no token is issued for credentials that changed after the login checked them", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const checked = Option.getOrThrow(yield* (yield* UserRepo).findByEmail(user.email))
        const sessions = yield* Sessions
        yield* sessions.changePassword(user.email, "a brand new passphrase")
        expect(yield* (yield* TokenStore).issue(checked)).toEqual(Option.none())
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`SELECT 1 FROM access_tokens WHERE user_id = ${user.userId}`).toEqual([])
      })
    )
  })
})
