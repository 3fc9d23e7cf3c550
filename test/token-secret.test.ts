/**
 * An access token works only where its TOKEN_SECRET is (issue #43, finding 9): one made by an
 * instance with another secret, or by this one before its secret changed, is refused, as
 * docs/DEPLOYING.md says; so changing the secret ends every token made with the old one.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createHash, createHmac, randomBytes } from "node:crypto"
import { TokenSecret } from "../src/Auth/TokenStore.ts"
import { Callers } from "../src/Embedding/Callers.ts"
import { call, codes, newUser, PASSWORD, stringAt, type TestUser } from "./support/Http.ts"
import { TestServer } from "./support/TestServer.ts"

/** An access token of the user as an instance with `secret` stores and hands it out. */
const tokenMadeWith = (user: TestUser, secret: string | Buffer) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const seed = randomBytes(32)
    const token = createHmac("sha256", secret).update(seed).digest("base64url")
    yield* sql`INSERT INTO access_tokens (token_hash, seed, user_id, expires)
      VALUES (${createHash("sha256").update(token).digest()}, ${seed}, ${user.userId}, now() + interval '1 day')`
    return token
  }).pipe(Effect.orDie)

describe("TOKEN_SECRET", () => {
  layer(TestServer({ TOKEN_SECRET: "this instance's secret" }), { excludeTestServices: true })((it) => {
    it.effect("a token made with another secret is refused (401 10000) by the API and the embedding's Callers; one made with this secret works", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const foreign = yield* tokenMadeWith(user, "the secret of an instance set up apart, or this one's before it changed")
        const shared = yield* tokenMadeWith(user, (yield* TokenSecret).current())
        const callers = yield* Effect.provide(Callers, Callers.Default)
        for (const path of ["/api/v4/domains", "/api/v3/domains"]) {
          const refused = yield* call("GET", path, { token: foreign })
          expect([path, refused.status, codes(refused)]).toEqual([path, 401, [10000]])
          expect((yield* call("GET", path, { token: shared })).status, path).toBe(200)
        }
        expect(yield* Effect.flip(callers.ofAccessToken(foreign))).toMatchObject({ _tag: "InvalidToken" })
        expect((yield* callers.ofAccessToken(shared)).userId).toBe(user.userId)
        // E2 hands out only a token this secret makes: the one it can rebuild, never the foreign one.
        const login = yield* call("POST", "/api/v4/access_token", { body: { email: user.email, password: PASSWORD } })
        expect(stringAt(login.body, "access_token")).not.toBe(foreign)
      })
    )
  })
})
