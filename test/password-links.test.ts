import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Redacted } from "effect"
import { Redis } from "ioredis"
import { clientNetwork } from "../src/Platform/ClientIp.ts"
import { PasswordAttemptLimits, type PasswordAttemptLimitsService } from "../src/Redirect/PasswordAttemptLimits.ts"
import { ATTEMPT_LIMITS } from "../src/Redirect/PasswordAttempts.ts"
import { cookieName, passwordCookies, passwordVersion } from "../src/Redirect/PasswordCookie.ts"
import { newLink } from "./support/Fixtures.ts"
import { newUser } from "./support/Http.ts"
import { randomClient, redisReachable, testRedisUrl } from "./support/RateWindow.ts"
import { clicksOf, newShortDomain, visit } from "./support/Redirects.ts"
import { FACEBOOK, FIREFOX, postPassword, putSettings, storedPasswordHash } from "./support/SmartLinks.ts"
import { TestServer } from "./support/TestServer.ts"
import { describeUnless, withoutRedis } from "./support/SkipReasons.ts"

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

/** Sends `answers`, one after another, each from its network; their replies. */
const postAll = (link: { host: string; path: string }, answers: ReadonlyArray<readonly [network: string, password: string]>) =>
  Effect.forEach(answers, ([network, password]) => postPassword(link.host, link.path, password, { "x-forwarded-for": network }))

/** The guesses of `networks` new /64 networks, five each (their own budget): empty answers, which are counted but need no hash. */
const guessesFrom = (networks: number) => {
  const block = randomClient().split(":")[2]
  return Array.from({ length: networks * 5 }, (_, n) => [`2001:db8:${block}:${(n % networks) + 1}::${n + 1}`, ""] as const)
}

const statusesOf = (replies: ReadonlyArray<{ status: number }>) => {
  const counts: Record<number, number> = {}
  for (const reply of replies) counts[reply.status] = (counts[reply.status] ?? 0) + 1
  return counts
}

/** A right answer from `network`: its pass. */
const unlock = (link: { host: string; path: string }, network: string) =>
  Effect.map(postPassword(link.host, link.path, PASSWORD, { "x-forwarded-for": network }), (right) => {
    expect(right.status, right.text).toBe(303)
    return passOf(right.headers["set-cookie"])
  })

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

describe("password guesses on one link from many networks", () => {
  layer(TestServer({ TRUST_PROXY: "127.0.0.1" }), { excludeTestServices: true })((it) => {
    it.effect("40 networks of five guesses: 30 are judged, the rest 503 with Retry-After; a new network's right answer waits too; a proven network and a pass get through; other links are not held", () =>
      Effect.gen(function* () {
        const link = yield* passwordLink
        const other = yield* passwordLink
        const home = randomClient()
        const pass = yield* unlock(link, home)
        const replies = yield* postAll(link, guessesFrom(8))
        expect(statusesOf(replies)).toEqual({ 403: ATTEMPT_LIMITS.perLink, 503: 40 - ATTEMPT_LIMITS.perLink })
        for (const refused of replies.slice(ATTEMPT_LIMITS.perLink)) {
          expectForm(refused, 503)
          expect(refused.text).toContain("Too many tries on this link.")
          expect(Number(refused.headers["retry-after"])).toBeGreaterThan(30)
          expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60)
        }
        // The right answer from a network that never proved the link is not judged while the ceiling holds.
        const stranger = yield* postPassword(link.host, link.path, PASSWORD, { "x-forwarded-for": randomClient() })
        expectForm(stranger, 503)
        expect(stranger.headers["set-cookie"]).toBeUndefined()
        // A network that proved it is held by its own budget only.
        yield* unlock(link, home)
        const through = yield* visit(link.host, link.path, { headers: { cookie: pass } })
        expect([through.status, through.headers.location]).toEqual([301, DESTINATION])
        yield* unlock(other, randomClient())
      })
    )

    it.effect("right answers give their try back: 35 visitors who know the password, then 29 wrong guesses, are all judged", () =>
      Effect.gen(function* () {
        const link = yield* passwordLink
        for (let i = 0; i < ATTEMPT_LIMITS.perLink + 5; i++) yield* unlock(link, randomClient())
        const wrong = yield* postAll(link, guessesFrom(6).slice(0, ATTEMPT_LIMITS.perLink - 1))
        expect(statusesOf(wrong)).toEqual({ 403: ATTEMPT_LIMITS.perLink - 1 })
      })
    )
  })
})

describe("password guesses while Redis does not answer", () => {
  layer(TestServer({ TRUST_PROXY: "127.0.0.1", REDIS_URL: "redis://127.0.0.1:1" }), { excludeTestServices: true })((it) => {
    it.effect("are counted in process: the link's ceiling holds and the right answer gets through", () =>
      Effect.gen(function* () {
        const link = yield* passwordLink
        expect(statusesOf(yield* postAll(link, guessesFrom(8)))).toEqual({ 403: ATTEMPT_LIMITS.perLink, 503: 40 - ATTEMPT_LIMITS.perLink })
        expect((yield* postPassword(link.host, link.path, PASSWORD, { "x-forwarded-for": randomClient() })).status).toBe(503)
        const other = yield* passwordLink
        yield* unlock(other, randomClient())
      })
    )
  })
})

const redisUp = await redisReachable(testRedisUrl)

const otherInstance = (limits = ATTEMPT_LIMITS) =>
  Effect.map(Layer.build(PasswordAttemptLimits.layerRedis(Redacted.make(testRedisUrl), limits)), Context.get(PasswordAttemptLimits))

const allowedOf = (attempts: PasswordAttemptLimitsService, linkId: number, networks: ReadonlyArray<string>) =>
  Effect.map(
    Effect.forEach(networks, (network) => attempts.attempt(linkId, network)),
    (answers) => answers.map((answer) => (answer._tag === "Allowed" ? "allowed" : answer.by))
  )

describeUnless(withoutRedis(redisUp, "the counts are shared through Redis"), "password guesses counted in Redis", () => {
  layer(TestServer({ TRUST_PROXY: "127.0.0.1", REDIS_URL: testRedisUrl }), { excludeTestServices: true })((it) => {
    it.effect("the service and another instance share a link's ceiling and its proven networks; the keys expire with the window", () =>
      Effect.gen(function* () {
        const link = yield* passwordLink
        const home = randomClient()
        yield* unlock(link, home)
        const other = yield* otherInstance()
        const early = Array.from({ length: 20 }, () => randomClient())
        expect(yield* allowedOf(other, link.id, early)).toEqual(early.map(() => "allowed"))
        const replies = yield* postAll(link, guessesFrom(3))
        expect(statusesOf(replies)).toEqual({ 403: ATTEMPT_LIMITS.perLink - 20, 503: 15 - (ATTEMPT_LIMITS.perLink - 20) })
        expect(yield* allowedOf(other, link.id, [randomClient()])).toEqual(["link"])
        expect(yield* allowedOf(other, link.id, [clientNetwork(`${home.split("::")[0]}::77`)])).toEqual(["allowed"])
        yield* unlock(link, home)
        const ttl = yield* Effect.promise(async () => {
          const redis = new Redis(testRedisUrl, { maxRetriesPerRequest: 0 })
          try {
            const keys = await redis.keys(`links:pw:*:link:${link.id}`)
            return Promise.all(keys.map((key) => redis.pttl(key)))
          } finally {
            redis.disconnect()
          }
        })
        expect(ttl.length).toBeGreaterThanOrEqual(1)
        for (const ms of ttl) expect(ms).toBeGreaterThan(0)
        for (const ms of ttl) expect(ms).toBeLessThanOrEqual(ATTEMPT_LIMITS.windowMs)
      }).pipe(Effect.scoped)
    )

    it.effect("two counters share the ceiling exactly, and a right answer's try given back on one frees a try on the other", () =>
      Effect.gen(function* () {
        const limits = { ...ATTEMPT_LIMITS, perLink: 4 }
        const [a, b] = [yield* otherInstance(limits), yield* otherInstance(limits)]
        const link = yield* passwordLink
        const networks = Array.from({ length: 6 }, () => randomClient())
        const first = yield* a.attempt(link.id, networks[0]!)
        const together = yield* Effect.all(
          networks.slice(1).map((network, n) => (n % 2 === 0 ? b : a).attempt(link.id, network)),
          { concurrency: "unbounded" }
        )
        expect(together.filter((answer) => answer._tag === "Allowed").length).toBe(3)
        expect(yield* allowedOf(b, link.id, [randomClient()])).toEqual(["link"])
        if (first._tag !== "Allowed") throw new Error("the first try was refused")
        yield* a.proven(link.id, networks[0]!, first.ticket)
        expect(yield* allowedOf(b, link.id, [randomClient(), randomClient()])).toEqual(["allowed", "link"])
        expect(yield* allowedOf(b, link.id, [networks[0]!])).toEqual(["allowed"])
      }).pipe(Effect.scoped)
    )
  })
})
