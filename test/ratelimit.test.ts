import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { createServer } from "node:net"
import { call, type Reply } from "./support/Http.ts"
import { inOneSecond, nextSecond, randomClient, redisReachable, testRedisUrl } from "./support/RateWindow.ts"
import { BaseUrl, TestServer } from "./support/TestServer.ts"

const LIMITED = { errors: [{ code: 10900, message: "rate limit exceeded" }] }

const expectLimited = (reply: Reply, context = "") => {
  expect(reply.status, `${context} ${reply.text}`).toBe(503)
  expect(reply.body, context).toEqual(LIMITED)
  expect(reply.headers.get("retry-after"), context).toBe("1")
  expect(reply.headers.get("content-type"), context).toMatch(/^application\/json/)
}

const expectServed = (reply: Reply, status: number, context = "") => {
  expect(reply.status, `${context} ${reply.text}`).toBe(status)
}

/** An API call that needs no account: 401 when it is served. */
const errorCodes = (headers: Record<string, string> = {}) => call("GET", "/api/v4/error_codes", { headers })

const from = (client: string) => ({ "x-forwarded-for": client })

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
  })
})

class SecondServer extends Context.Tag("test/SecondServer")<SecondServer, string>() {}

/** A call to the second instance. */
const onSecond = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SecondServer, (url) => Effect.provideService(effect, BaseUrl, url))

const redisUp = await redisReachable(testRedisUrl)

describe.runIf(redisUp)("rate limit shared through Redis", () => {
  const env = { RATE_LIMIT_PER_SECOND: "3", TRUST_PROXY: "127.0.0.1", REDIS_URL: testRedisUrl }
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
