import { describe, expect, it, layer } from "@effect/vitest"
import { ConfigError, Context, Effect, Either, Layer } from "effect"
import { Redis } from "ioredis"
import { createServer } from "node:net"
import { appConfig, environment } from "../src/Config.ts"
import { clientNetwork } from "../src/Platform/ClientIp.ts"
import { call, newUser, type Reply } from "./support/Http.ts"
import { inOneSecond, nextSecond, randomClient, redisReachable, testRedisUrl } from "./support/RateWindow.ts"
import { newShortDomain, visit } from "./support/Redirects.ts"
import { BaseUrl, TestServer } from "./support/TestServer.ts"
import { describeUnless, withoutRedis } from "./support/SkipReasons.ts"

const LIMITED = { errors: [{ code: 10900, message: "rate limit exceeded" }] }

const expectLimited = (reply: Reply, context = "") => {
  expect(reply.status, `${context} ${reply.text}`).toBe(503)
  expect(reply.body, context).toEqual(LIMITED)
  expect(reply.headers.get("retry-after"), context).toBe("1")
  expect(reply.headers.get("ratelimit"), context).toMatch(/^"(net|token)";r=0;t=1$/)
  expect(reply.headers.get("content-type"), context).toMatch(/^application\/json/)
}

const expectServed = (reply: Reply, status: number, context = "") => {
  expect(reply.status, `${context} ${reply.text}`).toBe(status)
}

/** An API call that needs no account: 401 when it is served. */
const errorCodes = (headers: Record<string, string> = {}) => call("GET", "/api/v4/error_codes", { headers })

const from = (client: string) => ({ "x-forwarded-for": client })

/** An API call with an access token (200 when the token is valid), from `client` behind the trusted proxy. */
const domains = (token: string, client: string) => call("GET", "/api/v4/domains", { token, headers: from(client) })

/** The first four groups of `randomClient()`: a /64 no other test run uses at the same time. */
const randomNetwork = () => randomClient().split("::")[0]!

let emails = 0
const failedLogin = () =>
  call("POST", "/api/v4/validate_login", {
    body: { email: `nobody${++emails}.${Date.now()}@example.com`, password: "wrong password!" }
  })

describe("rate limit, in process", () => {
  layer(TestServer({ RATE_LIMIT_PER_SECOND: "3" }), { excludeTestServices: true })((it) => {
    it.effect("the 4th call within one second from one IP is refused with 503 10900 and Retry-After: 1", () =>
      Effect.gen(function* () {
        const replies = yield* inOneSecond(Effect.all([errorCodes(), errorCodes(), errorCodes(), errorCodes(), errorCodes()]))
        replies.slice(0, 3).forEach((reply, i) => expectServed(reply, 401, `call ${i + 1}`))
        expectLimited(replies[3]!, "call 4")
        expectLimited(replies[4]!, "call 5")
      })
    )

    it.effect("calls in the next second are served again", () =>
      Effect.gen(function* () {
        const first = yield* inOneSecond(Effect.all([errorCodes(), errorCodes(), errorCodes(), errorCodes()]))
        expectLimited(first[3]!)
        yield* nextSecond
        const next = yield* Effect.all([errorCodes(), errorCodes(), errorCodes()])
        next.forEach((reply, i) => expectServed(reply, 401, `next second, call ${i + 1}`))
      })
    )

    it.effect("unknown routes count", () =>
      Effect.gen(function* () {
        const replies = yield* inOneSecond(
          Effect.all([call("GET", "/api/v4/nothing"), call("GET", "/nowhere"), call("DELETE", "/api/v4/domains"), errorCodes()])
        )
        replies.slice(0, 3).forEach((reply, i) => expectServed(reply, 404, `call ${i + 1}`))
        expectLimited(replies[3]!)
        const unknown = yield* inOneSecond(Effect.all([errorCodes(), errorCodes(), errorCodes(), call("GET", "/api/v4/nothing")]))
        expectLimited(unknown[3]!, "an unknown route over the limit")
      })
    )

    it.effect("failed logins count, and an over-limit login is refused without a success field", () =>
      Effect.gen(function* () {
        const replies = yield* inOneSecond(Effect.all([failedLogin(), failedLogin(), failedLogin(), failedLogin()]))
        replies.slice(0, 3).forEach((reply, i) => expectServed(reply, 401, `login ${i + 1}`))
        expectLimited(replies[3]!)
      })
    )

    it.effect("a client-written X-Forwarded-For does not buy a new budget", () =>
      Effect.gen(function* () {
        const replies = yield* inOneSecond(
          Effect.all([
            errorCodes(from("198.51.100.1")),
            errorCodes(from("198.51.100.2")),
            errorCodes(from("198.51.100.3")),
            errorCodes(from("198.51.100.4")),
            errorCodes({ "x-forwarded-for": "198.51.100.5, 127.0.0.2" })
          ])
        )
        replies.slice(0, 3).forEach((reply, i) => expectServed(reply, 401, `call ${i + 1}`))
        expectLimited(replies[3]!, "another X-Forwarded-For")
        expectLimited(replies[4]!, "a longer X-Forwarded-For")
      })
    )

    it.effect("/healthz, /readyz and /metrics are neither limited nor counted", () =>
      Effect.gen(function* () {
        const operational = () => Effect.all([call("GET", "/healthz"), call("GET", "/readyz"), call("GET", "/metrics")])
        const replies = yield* inOneSecond(
          Effect.gen(function* () {
            const before = [...(yield* operational()), ...(yield* operational())]
            const api = yield* Effect.all([errorCodes(), errorCodes(), errorCodes(), errorCodes()])
            const after = [...(yield* operational()), ...(yield* operational())]
            return { before, api, after }
          })
        )
        for (const reply of [...replies.before, ...replies.after]) expectServed(reply, 200)
        replies.api.slice(0, 3).forEach((reply, i) => expectServed(reply, 401, `api call ${i + 1}`))
        expectLimited(replies.api[3]!)
      })
    )
  })
})

describe("rate limit behind a trusted proxy", () => {
  layer(TestServer({ RATE_LIMIT_PER_SECOND: "3", TRUST_PROXY: "127.0.0.1" }), { excludeTestServices: true })((it) => {
    it.effect("each X-Forwarded-For client, and the proxy itself, has its own budget", () =>
      Effect.gen(function* () {
        const replies = yield* inOneSecond(
          Effect.gen(function* () {
            const first = yield* Effect.all([1, 2, 3].map(() => errorCodes(from("198.51.100.10"))))
            const second = yield* Effect.all([1, 2, 3].map(() => errorCodes(from("198.51.100.20"))))
            const direct = yield* Effect.all([1, 2, 3].map(() => errorCodes()))
            const over = yield* Effect.all([errorCodes(from("198.51.100.10")), errorCodes(from("198.51.100.20")), errorCodes()])
            return { served: [...first, ...second, ...direct], over }
          })
        )
        replies.served.forEach((reply, i) => expectServed(reply, 401, `call ${i + 1}`))
        replies.over.forEach((reply, i) => expectLimited(reply, `4th call of client ${i + 1}`))
      })
    )

    it.effect("spoofed leftmost entries and IPv4-mapped spellings do not split one client's budget", () =>
      Effect.gen(function* () {
        const replies = yield* inOneSecond(
          Effect.all([
            errorCodes({ "x-forwarded-for": "1.1.1.1, 198.51.100.30" }),
            errorCodes({ "x-forwarded-for": "2.2.2.2, ::ffff:198.51.100.30" }),
            errorCodes({ "x-forwarded-for": "198.51.100.30" }),
            errorCodes({ "x-forwarded-for": "3.3.3.3, 198.51.100.30" })
          ])
        )
        replies.slice(0, 3).forEach((reply, i) => expectServed(reply, 401, `call ${i + 1}`))
        expectLimited(replies[3]!)
      })
    )

    it.effect("20 IPv6 addresses of one /64, in any spelling, share one budget; the next /64 has its own", () =>
      Effect.gen(function* () {
        const spellings = (i: number) =>
          [`2001:db8:64:1::${(i + 1).toString(16)}`, `2001:0DB8:0064:0001:${i.toString(16)}:0:0:1`, `[2001:db8:64:1:${i.toString(16)}::]:443`][i % 3]!
        const replies = yield* inOneSecond(
          Effect.gen(function* () {
            const one = yield* Effect.all(Array.from({ length: 20 }, (_, i) => errorCodes(from(spellings(i)))))
            const next = yield* Effect.all([1, 2, 3, 4].map((i) => errorCodes(from(`2001:db8:64:2::${i}`))))
            return { one, next }
          })
        )
        replies.one.slice(0, 3).forEach((reply, i) => expectServed(reply, 401, `address ${i + 1} of the /64`))
        replies.one.slice(3).forEach((reply, i) => expectLimited(reply, `address ${i + 4} of the /64`))
        replies.next.slice(0, 3).forEach((reply, i) => expectServed(reply, 401, `address ${i + 1} of the next /64`))
        expectLimited(replies.next[3]!, "address 4 of the next /64")
      })
    )
  })
})

describe("rate limit keys", () => {
  it("an IPv4 address is its own network; an IPv6 address is counted for its /64, in one spelling", () => {
    expect(clientNetwork("198.51.100.7")).toBe("198.51.100.7")
    expect(clientNetwork("::ffff:198.51.100.7")).toBe("198.51.100.7")
    expect(clientNetwork("::FFFF:c633:6407")).toBe("198.51.100.7")
    for (const spelling of [
      "2001:db8:a:b::1",
      "2001:DB8:A:B:ffff:ffff:ffff:ffff",
      "2001:0db8:000a:000b:0:0:0:0",
      "[2001:db8:a:b::1%eth0]",
      "2001:db8:a:b:1::",
      "2001:db8:a:b::198.51.100.7"
    ]) {
      expect(clientNetwork(spelling), spelling).toBe("2001:db8:a:b::/64")
    }
    expect(clientNetwork("2001:db8:a:c::1")).toBe("2001:db8:a:c::/64")
    expect(clientNetwork("2001:db8::1:2:3:4")).toBe("2001:db8::/64")
    expect(clientNetwork("::1")).toBe("::/64")
  })

  it.effect("RATE_LIMIT_PER_TOKEN_PER_SECOND defaults to 10, takes a positive integer and refuses anything else naming itself", () =>
    Effect.gen(function* () {
      const read = (env: Record<string, string>) =>
        Effect.either(Effect.withConfigProvider(appConfig, environment(env))).pipe(
          Effect.map(Either.map((config) => config.rateLimitPerTokenPerSecond)),
          Effect.map(Either.mapLeft((error: ConfigError.ConfigError) => String(error)))
        )
      expect(yield* read({})).toEqual(Either.right(10))
      expect(yield* read({ RATE_LIMIT_PER_TOKEN_PER_SECOND: "25" })).toEqual(Either.right(25))
      for (const bad of ["0", "-3", "ten", "1.5"]) {
        const refused = yield* read({ RATE_LIMIT_PER_TOKEN_PER_SECOND: bad })
        expect(Either.isLeft(refused) ? refused.left : "accepted", bad).toContain("RATE_LIMIT_PER_TOKEN_PER_SECOND")
      }
      const zero = yield* read({ RATE_LIMIT_PER_TOKEN_PER_SECOND: "0" })
      expect(Either.isLeft(zero) ? zero.left : "accepted").toContain("must be a positive integer")
    })
  )
})

describe("rate limit per access token", () => {
  layer(TestServer({ RATE_LIMIT_PER_SECOND: "3", RATE_LIMIT_PER_TOKEN_PER_SECOND: "4", TRUST_PROXY: "127.0.0.1" }), {
    excludeTestServices: true
  })((it) => {
    it.effect("one token from many addresses is limited at RATE_LIMIT_PER_TOKEN_PER_SECOND; other tokens and calls without one are not", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const other = yield* newUser()
        const replies = yield* inOneSecond(
          Effect.gen(function* () {
            const spread = yield* Effect.all([1, 2, 3, 4, 5, 6].map((i) => domains(user.token, `198.51.100.${i}`)))
            const otherToken = yield* domains(other.token, "198.51.100.1")
            const anonymous = yield* errorCodes(from("198.51.100.2"))
            return { spread, otherToken, anonymous }
          })
        )
        replies.spread.slice(0, 4).forEach((reply, i) => expectServed(reply, 200, `call ${i + 1} of the token`))
        replies.spread.slice(4).forEach((reply, i) => expectLimited(reply, `call ${i + 5} of the token`))
        expectServed(replies.otherToken, 200, "another token")
        expectServed(replies.anonymous, 401, "a call without a token")
      })
    )

    it.effect("a token that names nobody is counted too, before it is looked up", () =>
      Effect.gen(function* () {
        const garbage = `not-a-token-${Date.now()}`
        const replies = yield* inOneSecond(Effect.all([1, 2, 3, 4, 5].map((i) => domains(garbage, `198.51.100.${20 + i}`))))
        replies.slice(0, 4).forEach((reply, i) => expectServed(reply, 401, `call ${i + 1}`))
        expectLimited(replies[4]!, "call 5")
      })
    )

    it.effect("API answers carry RateLimit-Policy and RateLimit (the budget closest to its limit), counting down; redirects and /healthz do not", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const replies = yield* inOneSecond(
          Effect.gen(function* () {
            const anonymous = yield* Effect.all([1, 2, 3, 4].map(() => errorCodes(from("198.51.100.50"))))
            const token = yield* Effect.all([1, 2, 3, 4, 5].map((i) => domains(user.token, `198.51.100.${60 + i}`)))
            return { anonymous, token }
          })
        )
        const fields = (reply: Reply) => [reply.status, reply.headers.get("ratelimit-policy"), reply.headers.get("ratelimit")]
        expect(replies.anonymous.map(fields)).toEqual([
          [401, `"net";q=3;w=1`, `"net";r=2;t=1`],
          [401, `"net";q=3;w=1`, `"net";r=1;t=1`],
          [401, `"net";q=3;w=1`, `"net";r=0;t=1`],
          [503, `"net";q=3;w=1`, `"net";r=0;t=1`]
        ])
        const both = `"net";q=3;w=1, "token";q=4;w=1`
        expect(replies.token.map(fields)).toEqual([
          [200, both, `"net";r=2;t=1`],
          [200, both, `"net";r=2;t=1`],
          [200, both, `"token";r=1;t=1`],
          [200, both, `"token";r=0;t=1`],
          [503, both, `"token";r=0;t=1`]
        ])
        expectLimited(replies.anonymous[3]!)
        expectLimited(replies.token[4]!)

        const redirect = yield* visit(domain.name, "/nothing")
        expect(redirect.status).toBe(404)
        expect(redirect.headers["ratelimit"]).toBeUndefined()
        expect(redirect.headers["ratelimit-policy"]).toBeUndefined()
        const health = yield* call("GET", "/healthz")
        expect(health.status).toBe(200)
        expect(health.headers.get("ratelimit")).toBeNull()
        expect(health.headers.get("ratelimit-policy")).toBeNull()
      })
    )
  })
})

class SecondServer extends Context.Tag("test/SecondServer")<SecondServer, string>() {}

/** A call to the second instance. */
const onSecond = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SecondServer, (url) => Effect.provideService(effect, BaseUrl, url))

const redisUp = await redisReachable(testRedisUrl)

describeUnless(withoutRedis(redisUp, "the limit is shared through Redis"), "rate limit shared through Redis", () => {
  const env = { RATE_LIMIT_PER_SECOND: "3", RATE_LIMIT_PER_TOKEN_PER_SECOND: "3", TRUST_PROXY: "127.0.0.1", REDIS_URL: testRedisUrl }
  // Built on its own: within one layer graph both listeners would share the memoised API router.
  const second = Layer.scoped(SecondServer, Effect.map(Layer.build(TestServer(env)), Context.get(BaseUrl)))
  layer(Layer.merge(TestServer(env), second), { excludeTestServices: true })((it) => {
    it.effect("two instances share one budget per client", () =>
      Effect.gen(function* () {
        const client = randomClient()
        const replies = yield* inOneSecond(
          Effect.all([
            errorCodes(from(client)),
            errorCodes(from(client)),
            errorCodes(from(client)),
            onSecond(errorCodes(from(client)))
          ])
        )
        replies.slice(0, 3).forEach((reply, i) => expectServed(reply, 401, `call ${i + 1} on A`))
        expectLimited(replies[3]!, "4th call on B")
      })
    )

    it.effect("calls spread over both instances count together, per client", () =>
      Effect.gen(function* () {
        const one = randomClient()
        const two = randomClient()
        const replies = yield* inOneSecond(
          Effect.all([
            onSecond(errorCodes(from(one))),
            errorCodes(from(one)),
            onSecond(errorCodes(from(one))),
            errorCodes(from(two)),
            onSecond(errorCodes(from(two))),
            errorCodes(from(one)),
            onSecond(errorCodes(from(two)))
          ])
        )
        for (const i of [0, 1, 2, 3, 4, 6]) expectServed(replies[i]!, 401, `call ${i + 1}`)
        expectLimited(replies[5]!, "the 4th call of the first client")
      })
    )

    it.effect("two instances share the budget of an IPv6 /64 and of a token; Redis keys hold a hash of the token, never the token", () =>
      Effect.gen(function* () {
        const network = randomNetwork()
        const user = yield* newUser()
        const replies = yield* inOneSecond(
          Effect.gen(function* () {
            const net = yield* Effect.all([
              errorCodes(from(`${network}::1`)),
              onSecond(errorCodes(from(`${network}::2`))),
              errorCodes(from(`${network}:1::3`)),
              onSecond(errorCodes(from(`${network}:ffff:ffff:ffff:ffff`)))
            ])
            // Each instance has a database of its own: the second one does not know the token (401),
            // and counts it all the same, before looking it up.
            const token = yield* Effect.all([
              domains(user.token, `${randomNetwork()}::1`),
              onSecond(domains(user.token, `${randomNetwork()}::1`)),
              domains(user.token, `${randomNetwork()}::1`),
              onSecond(domains(user.token, `${randomNetwork()}::1`))
            ])
            const keys = yield* Effect.promise(async () => {
              const redis = new Redis(testRedisUrl, { maxRetriesPerRequest: 0 })
              try {
                return await redis.keys("links:rl:*")
              } finally {
                redis.disconnect()
              }
            })
            return { net, token, keys }
          })
        )
        replies.net.slice(0, 3).forEach((reply, i) => expectServed(reply, 401, `address ${i + 1} of the /64`))
        expectLimited(replies.net[3]!, "address 4 of the /64, on B")
        expectServed(replies.token[0]!, 200, "token call 1 on A")
        expectServed(replies.token[1]!, 401, "token call 2 on B")
        expectServed(replies.token[2]!, 200, "token call 3 on A")
        expectLimited(replies.token[3]!, "token call 4 on B")
        expect(replies.keys.some((key) => key.endsWith(`:net:${network}::/64`)), replies.keys.join(" ")).toBe(true)
        expect(replies.keys.filter((key) => key.includes(":token:")).length).toBeGreaterThan(0)
        expect(replies.keys.filter((key) => key.includes(user.token))).toEqual([])
      })
    )
  })
})

/** A TCP listener that accepts connections and never answers: a hung Redis. */
const silentRedis = Layer.unwrapScoped(
  Effect.gen(function* () {
    const server = yield* Effect.acquireRelease(
      Effect.async<ReturnType<typeof createServer>>((resume) => {
        const server = createServer(() => undefined)
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) => Effect.sync(() => server.close())
    )
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    return TestServer({ RATE_LIMIT_PER_SECOND: "3", REDIS_URL: `redis://127.0.0.1:${port}` })
  })
)

const servedPromptlyAndLimited = Effect.gen(function* () {
  const timed = Effect.gen(function* () {
    const started = Date.now()
    const reply = yield* errorCodes()
    return { reply, ms: Date.now() - started }
  })
  const replies = yield* inOneSecond(Effect.all([timed, timed, timed, timed]))
  for (const { ms } of replies) expect(ms).toBeLessThan(500)
  replies.slice(0, 3).forEach(({ reply }, i) => expectServed(reply, 401, `call ${i + 1}`))
  expectLimited(replies[3]!.reply)
})

describe("rate limit when Redis is unavailable", () => {
  layer(TestServer({ RATE_LIMIT_PER_SECOND: "3", REDIS_URL: "redis://127.0.0.1:1" }), { excludeTestServices: true })((it) => {
    it.effect("a closed Redis port: requests are served promptly and limited in process", () => servedPromptlyAndLimited)
  })

  layer(silentRedis, { excludeTestServices: true })((it) => {
    it.effect("a Redis that never answers: requests are served promptly and limited in process", () => servedPromptlyAndLimited)
  })
})
