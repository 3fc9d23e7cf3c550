import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { cookieName, passwordCookies, passwordVersion } from "../src/Redirect/PasswordCookie.ts"
import { newLink } from "./support/Fixtures.ts"
import { newUser } from "./support/Http.ts"
import { randomClient } from "./support/RateWindow.ts"
import { clicksOf, newShortDomain, visit } from "./support/Redirects.ts"
import { FACEBOOK, FIREFOX, postPassword, putSettings, storedPasswordHash } from "./support/SmartLinks.ts"
import { TestServer } from "./support/TestServer.ts"

const DESTINATION = "https://dest.example/the-secret-place"
const PASSWORD = "open sesame 42"

/** A password link on a new short domain: its host, path and id. */
const passwordLink = Effect.gen(function* () {
  const user = yield* newUser()
  const domain = yield* newShortDomain(user)
  const alias = `locked${Date.now().toString(36)}`
  const id = yield* newLink(user, domain.id, { url: DESTINATION, alias })
  yield* putSettings(user, domain.id, id, { password: PASSWORD })
  return { user, domain, host: domain.name, path: `/${alias}`, id }
})

const passOf = (setCookie: string | Array<string> | undefined) => {
  const first = Array.isArray(setCookie) ? setCookie[0] : setCookie
  if (first === undefined) throw new Error("no Set-Cookie")
  return first.split(";")[0]!
}

const expectForm = (reply: { status: number; headers: Record<string, unknown>; text: string }, status: number) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.headers["content-type"]).toBe("text/html; charset=utf-8")
  expect(reply.headers["cache-control"]).toBe("no-store")
  expect(reply.headers.location).toBeUndefined()
  expect(reply.text).not.toContain("dest.example")
}

describe("password links", () => {
  layer(TestServer({ TRUST_PROXY: "127.0.0.1" }), { excludeTestServices: true })((it) => {
    it.effect("GET answers a form without the destination, no-store and a strict policy; HEAD and crawlers get its status; nothing is recorded", () =>
      Effect.gen(function* () {
        const link = yield* passwordLink
        const form = yield* visit(link.host, link.path, { headers: { "user-agent": FIREFOX } })
        expectForm(form, 200)
        expect(form.text).toMatch(/<form method="post">/)
        expect(form.text).toMatch(/<input id="password" name="password" type="password"/)
        expect(form.headers["content-security-policy"]).toMatch(/^default-src 'none'; style-src 'sha256-[^']+'; form-action 'self'/)
        expect(form.text).not.toMatch(/<script|src=|href=/)
        const head = yield* visit(link.host, link.path, { method: "HEAD" })
        expect([head.status, head.text, head.headers.location]).toEqual([200, "", undefined])
        expectForm(yield* visit(link.host, link.path, { headers: { "user-agent": FACEBOOK } }), 200)
        expect(yield* clicksOf(link.id)).toEqual([])
      })
    )

    it.effect("a wrong answer is 403 with the form; the right one sets a one-day pass for this link and 303s back; then one redirect and one click", () =>
      Effect.gen(function* () {
        const link = yield* passwordLink
        const client = { "x-forwarded-for": randomClient() }
        const wrong = yield* postPassword(link.host, link.path, "not it at all", client)
        expectForm(wrong, 403)
        expect(wrong.text).toContain(`role="alert"`)
        expect(wrong.headers["set-cookie"]).toBeUndefined()
        const right = yield* postPassword(link.host, `${link.path}?ref=mail`, PASSWORD, client)
        expect(right.status, right.text).toBe(303)
        expect(right.headers.location).toBe(`${link.path}?ref=mail`)
        const setCookie = String(right.headers["set-cookie"])
        expect(setCookie).toMatch(new RegExp(`^${cookieName(link.id)}=[^;]+; Max-Age=86400; Path=/; HttpOnly; SameSite=Lax$`))
        const through = yield* visit(link.host, `${link.path}?ref=mail`, { headers: { cookie: passOf(right.headers["set-cookie"]), "user-agent": FIREFOX } })
        expect(through.status).toBe(301)
        expect(through.headers.location).toBe(`${DESTINATION}?ref=mail`)
        expect(through.headers["cache-control"]).toBe("no-store")
        const clicks = yield* clicksOf(link.id)
        expect(clicks.length).toBe(1)
        expect(clicks[0]!.user_agent).toBe(FIREFOX)
        const head = yield* visit(link.host, link.path, { method: "HEAD", headers: { cookie: passOf(right.headers["set-cookie"]) } })
        expect([head.status, head.headers.location]).toEqual([301, DESTINATION])
        expect((yield* clicksOf(link.id)).length).toBe(1)
      })
    )

    it.effect("a tampered, expired or other link's pass, or one from before a password change, gets the form", () =>
      Effect.gen(function* () {
        const link = yield* passwordLink
        const other = yield* passwordLink
        const right = yield* postPassword(link.host, link.path, PASSWORD, { "x-forwarded-for": randomClient() })
        const pass = passOf(right.headers["set-cookie"])
        const tampered = pass.slice(0, -3) + (pass.endsWith("AAA") ? "BBB" : "AAA")
        expectForm(yield* visit(link.host, link.path, { headers: { cookie: tampered } }), 200)
        const keys = passwordCookies(Buffer.from("test token secret"))
        const version = passwordVersion(yield* storedPasswordHash(link.id))
        const lapsed = passOf(keys.issue(link.id, version, Date.now() - 24 * 3600_000 - 1000, false))
        expectForm(yield* visit(link.host, link.path, { headers: { cookie: lapsed } }), 200)
        const fresh = passOf(keys.issue(link.id, version, Date.now(), false))
        expect((yield* visit(link.host, link.path, { headers: { cookie: fresh } })).status).toBe(301)
        const renamed = pass.replace(cookieName(link.id), cookieName(other.id))
        expectForm(yield* visit(other.host, other.path, { headers: { cookie: `${pass}; ${renamed}` } }), 200)
        yield* putSettings(link.user, link.domain.id, link.id, { password: "a new password" })
        expectForm(yield* visit(link.host, link.path, { headers: { cookie: pass } }), 200)
      })
    )

    it.effect("the sixth try within a minute from one address is 503 with Retry-After, even when right; another address may still try", () =>
      Effect.gen(function* () {
        const link = yield* passwordLink
        const client = { "x-forwarded-for": randomClient() }
        for (let i = 0; i < 5; i++) expect((yield* postPassword(link.host, link.path, `guess ${i}`, client)).status).toBe(403)
        const refused = yield* postPassword(link.host, link.path, PASSWORD, client)
        expectForm(refused, 503)
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(50)
        expect(refused.headers["set-cookie"]).toBeUndefined()
        expect((yield* postPassword(link.host, link.path, PASSWORD, { "x-forwarded-for": randomClient() })).status).toBe(303)
      })
    )

    it.effect("on a domain with SSL the pass is Secure", () =>
      Effect.gen(function* () {
        const link = yield* passwordLink
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE domains SET has_ssl = true WHERE id = ${link.domain.id}`
        const right = yield* postPassword(link.host, link.path, PASSWORD, { "x-forwarded-for": randomClient() })
        expect(right.status).toBe(303)
        expect(String(right.headers["set-cookie"])).toMatch(/; HttpOnly; SameSite=Lax; Secure$/)
      })
    )

    it.effect("POST is refused with 405 for links without a password; a body that is not the form is 400 or 413", () =>
      Effect.gen(function* () {
        const link = yield* passwordLink
        yield* newLink(link.user, link.domain.id, { url: DESTINATION, alias: `open${link.id}` })
        const open = yield* postPassword(link.host, `/open${link.id}`, PASSWORD)
        expect([open.status, open.headers.allow]).toEqual([405, "GET, HEAD"])
        expect((yield* postPassword(link.host, "/nothing-here", PASSWORD)).status).toBe(405)
        const client = { "x-forwarded-for": randomClient() }
        const json = yield* visit(link.host, link.path, {
          method: "POST",
          headers: { "content-type": "application/json", "content-length": "24", ...client },
          body: `{"password":"open sesa"}`
        })
        expectForm(json, 400)
        const huge = yield* postPassword(link.host, link.path, "x".repeat(5000), client)
        expect(huge.status).toBe(413)
      })
    )
  })
})
