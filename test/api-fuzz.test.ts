/**
 * Fuzzing of the whole API (issue "Reliability"): every endpoint of the contract (`src/Api`), found by
 * reflection, under /api/v4 and /api/v3, with hostile path ids, query strings, bodies, content types,
 * methods and headers. Every answer must be a documented status (never a 500) and, unless a success,
 * exactly `{errors: [{code, message}, ...]}` of catalogue codes of that status; refused writes must
 * leave everything as it was.
 *
 * The fast-check seed is random on each run (fast-check prints it with a counterexample); set
 * FUZZ_SEED to replay one.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, FastCheck as fc, Runtime } from "effect"
import { LoginThrottle } from "../src/Auth/LoginThrottle.ts"
import { at, call, PASSWORD } from "./support/Http.ts"
import { TestServer } from "./support/TestServer.ts"
import { type Endpoint, ENDPOINTS, isLogin, routeOf, ROUTES, VERSIONS } from "./support/ApiContract.ts"
import { baseline, type Fixtures, fixtures, Fuzz, REQUIRED_QUERY, validBody, validParam } from "./support/FuzzFixtures.ts"
import { checkAnswer, codesOf, describeRequest, type FuzzRequest, parseJson, send } from "./support/FuzzRequests.ts"
import { AUTH_VARIANTS, authorization, type AuthVariant, bodyCase, hostileId, INVALID_AUTH, misspelt, ODD_HOSTS, queryString } from "./support/FuzzInputs.ts"

// ---------------------------------------------------------------------------------------------------
// Running properties inside the test's Effect

const seed = process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED) }

/**
 * Runs per property, for about 40 s on the embedded database on 2 cores: per endpoint, version and
 * path parameter (ids), per endpoint and version (query strings, bodies), and in all (methods, state).
 */
const RUNS = { ids: 10, query: 10, bodies: 50, loginBodies: 8, methods: 300, state: 200 } as const

/** fc.assert of an async property whose body is an Effect run on the test's runtime. */
const property = <T, R>(arbitrary: fc.Arbitrary<T>, numRuns: number, body: (value: T) => Effect.Effect<void, never, R>) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<R>()
    const run = Runtime.runPromise(runtime)
    yield* Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(arbitrary, (value) => run(body(value))),
        { numRuns, endOnFailure: true, ...seed }
      )
    )
  })

/** Logins verify an argon2id hash; the growing delays per e-mail (tested elsewhere) are reset after each. */
const forgetLoginFailures = (request: FuzzRequest) =>
  Effect.gen(function* () {
    const throttle = yield* LoginThrottle
    const parsed = request.body === undefined ? undefined : parseJson(request.body)
    const email = parsed !== undefined && parsed.ok ? at(parsed.value, "email") : undefined
    if (typeof email === "string") yield* throttle.forget(email)
  })

const exchange = (endpoint: Endpoint | undefined, request: FuzzRequest) =>
  Effect.gen(function* () {
    const answer = yield* send(request)
    if (endpoint !== undefined && isLogin(endpoint)) yield* forgetLoginFailures(request)
    checkAnswer(endpoint, request, answer)
    return answer
  })

// ---------------------------------------------------------------------------------------------------

describe("API fuzzing: every endpoint of v4 and v3 under hostile input", () => {
  layer(TestServer({ URL_CHECK_ALLOW_PRIVATE: "true" }), { excludeTestServices: true, timeout: "120 seconds" })((it) => {
    it.layer(fixtures)((it) => {
      it.effect("the contract has the endpoints this file knows how to call", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          expect(ENDPOINTS.length).toBeGreaterThanOrEqual(30)
          for (const endpoint of ENDPOINTS) {
            if (endpoint.body !== "none") expect(() => validBody(endpoint, f, f.owner), endpoint.id).not.toThrow()
            for (const name of endpoint.params) expect(validParam(name, f), `${endpoint.id} :${name}`).toBeDefined()
          }
          // Each valid request is answered 200, so that every refusal below is the mutation's doing.
          for (const [endpoint, version] of ROUTES) {
            const request = baseline(endpoint, version, f)
            const answer = yield* exchange(endpoint, request)
            expect(answer.status, `${describeRequest(request)} -> ${answer.text.slice(0, 300)}`).toBe(200)
          }
        })
      )

      it.effect("hostile and misspelt path ids: 404 (400 10101 for E4's domain), never a 500", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          const withIds = ROUTES.filter(([endpoint]) => endpoint.params.length > 0)
          expect(withIds.length).toBeGreaterThan(20)
          const foreign: Readonly<Record<string, string>> = {
            domain_id: String(f.domainB),
            link_id: String(f.linkB),
            webhook_id: String(f.webhookB),
            delivery_id: String(f.deliveryB)
          }
          for (const [endpoint, version] of withIds) {
            const checkId = (name: string, id: string) =>
              Effect.gen(function* () {
                // The router ends a path at ";" as at "?": D1 on `/domains/1;x` would delete domain 1 for the tests after.
                if (endpoint.method === "DELETE" && id.includes(";")) return
                const request = baseline(endpoint, version, f, { params: { [name]: id } })
                const answer = yield* exchange(endpoint, request)
                const context = `${describeRequest(request)} -> ${answer.status} ${answer.text.slice(0, 300)}`
                // The router ends a path at ";" as at "?" (`/links/1;x` is link 1): only the answer's form is checked.
                if (id.includes(";")) return
                const allowed = endpoint.id === "links.create" && name === "domain_id" ? [400, 404] : [404]
                expect(allowed, context).toContain(answer.status)
                expect(codesOf(answer).filter((code) => ![10101, 10150, 10151, 10801, 10806].includes(code)), context).toEqual([])
              })
            for (const name of endpoint.params) {
              const own = Number(validParam(name, f))
              for (const id of [...misspelt(own), foreign[name]!, "999999999"]) yield* checkId(name, id)
              // An empty id changes the shape of the path: it may name another endpoint (E3 for "/domains/").
              yield* exchange(endpoint, baseline(endpoint, version, f, { params: { [name]: "" } }))
              yield* property(hostileId, RUNS.ids, (id) => checkId(name, id))
            }
          }
        }),
        120_000
      )

      it.effect("random query strings on every endpoint: documented statuses and catalogue bodies", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          for (const [endpoint, version] of ROUTES) {
            if (isLogin(endpoint)) continue // the bodies test covers logins; each one costs a password hash
            const required = REQUIRED_QUERY[endpoint.id] ?? []
            const prefix = required.map((name) => `${name}=${validParam(name, f) ?? ""}`)
            yield* property(fc.tuple(queryString(endpoint), fc.boolean()), RUNS.query, ([query, keepRequired]) =>
              Effect.asVoid(
                exchange(endpoint, baseline(endpoint, version, f, { query: [...(keepRequired ? prefix : []), query].join("&") }))
              )
            )
          }
        }),
        120_000
      )

      it.effect("random, mutated and invalid bodies and content types on every endpoint that takes a body", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          const withBodies = ROUTES.filter(([endpoint]) => endpoint.body !== "none")
          expect(withBodies.map(([endpoint]) => endpoint.id).sort()).toEqual(
            expect.arrayContaining(["auth.accessToken", "domains.create", "domains.update", "links.create", "links.update", "links.validate", "tags.createTag"])
          )
          for (const [endpoint, version] of withBodies) {
            const runs = isLogin(endpoint) ? RUNS.loginBodies : RUNS.bodies
            yield* property(bodyCase(endpoint, f), runs, (c) =>
              Effect.gen(function* () {
                const request = baseline(endpoint, version, f, { body: c.body, contentType: c.contentType, chunked: c.chunked })
                const answer = yield* exchange(endpoint, request)
                const size = request.body === undefined ? 0 : Buffer.byteLength(request.body)
                const context = `${describeRequest(request)} -> ${answer.status} ${answer.text.slice(0, 300)}`
                if (size > 64 * 1024) expect([answer.status, codesOf(answer)], context).toEqual([413, [10152]])
                else expect(answer.status, context).not.toBe(413)
                // A JSON body that does not parse is a 400 10153. (A UTF-8 byte order mark is
                // dropped when the body is decoded, as RFC 8259 lets parsers do; an empty body reads as null,
                // a body of the wrong shape, answered with the endpoint's own code.)
                const json = c.contentType?.toLowerCase().includes("application/json") === true
                const text = request.body?.replace(/^\uFEFF/, "")
                if (json && size <= 64 * 1024 && text !== undefined && text !== "" && !parseJson(text).ok) {
                  expect([answer.status, codesOf(answer)], context).toEqual([400, [10153]])
                }
              })
            )
          }
        }),
        120_000
      )

      it.effect("bodies where none is expected, wrong methods and odd Host headers", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          const methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"] as const
          const arbitrary = fc.record({
            route: fc.constantFrom(...ROUTES.filter(([endpoint]) => !isLogin(endpoint))),
            method: fc.constantFrom(...methods),
            host: fc.option(fc.constantFrom(...ODD_HOSTS), { nil: undefined }),
            body: fc.option(fc.constantFrom("{}", "[]", "null", "{\"a\":1}", "not json"), { nil: undefined }),
            proto: fc.option(fc.constantFrom("https", "http", "gopher", ""), { nil: undefined })
          })
          yield* property(arbitrary, RUNS.methods, ({ route: [endpoint, version], method, host, body, proto }) =>
            Effect.gen(function* () {
              // Another endpoint's DELETE on this path (D1 on E7's path) would delete account A's domain for the tests after.
              const path = baseline(endpoint, version, f).path.split("?")[0]!.replace(/^\/api\/v3\//, "/api/v4/")
              if (method === "DELETE" && endpoint.method !== "DELETE" && routeOf("DELETE", path) !== "unmatched") return
              const hasBody = body !== undefined && method !== "GET" && method !== "HEAD"
              const request = baseline(endpoint, version, f, {
                method,
                body: hasBody ? body : method === endpoint.method && endpoint.body !== "none" ? JSON.stringify(validBody(endpoint, f, f.owner)) : undefined,
                contentType: "application/json",
                headers: { ...(host === undefined ? {} : { host }), ...(proto === undefined ? {} : { "x-forwarded-proto": proto }) }
              })
              const v4Path = request.path.split("?")[0]!.replace(/^\/api\/v3\//, "/api/v4/")
              // Another method may reach another endpoint of the path (POST on DELETE /access_token's is E2, a login).
              const reached = ENDPOINTS.find((e) => e.method === method && e.path === routeOf(method, v4Path)) ?? endpoint
              const answer = yield* exchange(reached, request)
              const context = `${describeRequest(request)} -> ${answer.status} ${answer.text.slice(0, 300)}`
              // A method no endpoint of this path has is an unknown route (docs/decisions/0002-errors.md).
              const routed = [method, ...(method === "HEAD" ? ["GET"] : [])].some((m) => routeOf(m, v4Path) !== "unmatched")
              if (!routed) {
                expect([answer.status, method === "HEAD" ? [10151] : codesOf(answer)], context).toEqual([404, [10151]])
              }
            })
          )
        }),
        120_000
      )

      it.effect("missing, garbled and foreign Authorization: 401 10000, or 404 for another account's domain and link ids", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          /** Endpoints that name one of account A's resources in their path, query or body. */
          const namesResource = (endpoint: Endpoint) =>
            endpoint.params.length > 0 || (REQUIRED_QUERY[endpoint.id] ?? []).length > 0 || endpoint.id === "tags.createTag"
          const notFoundCodes = [10101, 10150, 10201, 10301]
          for (const [endpoint, version] of ROUTES) {
            if (!endpoint.authenticated) continue
            for (const variant of AUTH_VARIANTS) {
              // A valid token sent to DELETE /access_token would be revoked for the tests after.
              if (endpoint.id === "auth.revokeAccessToken" && !INVALID_AUTH.has(variant)) continue
              const header = authorization(variant, f)
              // E9 with the same name twice would be refused as taken: a fresh body each time.
              const request = baseline(endpoint, version, f, { token: undefined, headers: header === undefined ? {} : { authorization: header } })
              const answer = yield* exchange(endpoint, request)
              const context = `${variant}: ${describeRequest(request)} -> ${answer.status} ${answer.text.slice(0, 300)}`
              if (INVALID_AUTH.has(variant)) {
                expect([answer.status, codesOf(answer)], context).toEqual([401, [10000]])
              } else if (variant === "other account" && namesResource(endpoint)) {
                expect(answer.status, context).toBe(404)
                expect(codesOf(answer).every((code) => notFoundCodes.includes(code)), context).toBe(true)
              } else if (variant === "free plan" && endpoint.id.startsWith("analytics.")) {
                expect([answer.status, codesOf(answer)], context).toEqual([403, [10504]])
              } else {
                expect([200, 401, 403, 404], context).toContain(answer.status)
              }
            }
          }
        }),
        120_000
      )

      it.effect("refused link creates and updates, domain creates and updates and tag creates change nothing", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          const sql = yield* SqlClient.SqlClient
          const s = f.state
          const d = `/api/v4/${f.domainS}`
          const snapshot = Effect.gen(function* () {
            const read = (path: string) => Effect.map(call("GET", path, { token: s.token }), (reply) => ({ path, status: reply.status, body: reply.body }))
            const counts = yield* sql<{ links: number; domains: number; tags: number; link_tags: number; users: number }>`
              SELECT (SELECT count(*) FROM links)::int AS links, (SELECT count(*) FROM domains)::int AS domains,
                     (SELECT count(*) FROM tags)::int AS tags, (SELECT count(*) FROM link_tags)::int AS link_tags,
                     (SELECT count(*) FROM users)::int AS users`
            return [
              counts[0],
              yield* read("/api/v4/domains"),
              yield* read(`/api/v4/domains/${f.domainS}`),
              yield* read(`${d}/links?users=all`),
              yield* read(`${d}/links/${f.linkS}`),
              yield* read(`${d}/links/exists?alias=watched`),
              yield* read(`/api/v4/tags?domain_id=${f.domainS}`)
            ] as const
          }).pipe(Effect.orDie)
          const endpointOf = (id: string) => {
            const found = ENDPOINTS.find((endpoint) => endpoint.id === id)
            if (found === undefined) throw new Error(`no endpoint ${id}`)
            return found
          }
          const writes = ["links.create", "links.update", "domains.create", "domains.update", "tags.createTag"].map(endpointOf)
          /** Valid bodies of account S, each mutated in one way. */
          const stateFixtures: Fixtures = { ...f, owner: s, domainA: f.domainS, linkA: f.linkS }
          const arbitrary = fc
            .tuple(fc.constantFrom(...writes), fc.constantFrom(...VERSIONS), fc.nat(), fc.constantFrom<AuthVariant>("owner", "owner", "owner", "other account", "none"))
            .chain(([endpoint, version, pick, variant]) =>
              fc.record({
                endpoint: fc.constant(endpoint),
                version: fc.constant(version),
                variant: fc.constant(variant),
                body: bodyCase(endpoint, stateFixtures),
                id: fc.option(hostileId, { nil: undefined, freq: 4 }),
                pick: fc.constant(pick)
              })
            )
          let before = yield* snapshot
          let accepted = 0
          let refused = 0
          yield* property(arbitrary, RUNS.state, (c) =>
            Effect.gen(function* () {
              const header = c.variant === "owner" ? `Bearer ${s.token}` : authorization(c.variant, f)
              const param = c.endpoint.params[c.pick % Math.max(1, c.endpoint.params.length)]
              const request = baseline(c.endpoint, c.version, stateFixtures, {
                token: undefined,
                headers: header === undefined ? {} : { authorization: header },
                body: c.body.body,
                contentType: c.body.contentType,
                chunked: c.body.chunked,
                ...(c.id === undefined || param === undefined ? {} : { params: { [param]: c.id } })
              })
              const answer = yield* exchange(c.endpoint, request)
              const after = yield* snapshot
              if (answer.status === 200) {
                accepted++
                before = after
                return
              }
              refused++
              expect(after, `a refused request changed the state: ${describeRequest(request)} -> ${answer.status} ${answer.text.slice(0, 300)}`).toEqual(before)
            })
          )
          expect(refused).toBeGreaterThan(accepted)
        }),
        120_000
      )

      it.effect("the failures this fuzzer found, as fixed examples", () =>
        Effect.gen(function* () {
          const f = yield* Fuzz
          const auth = { authorization: `Bearer ${f.owner.token}` }
          const json = { ...auth, "content-type": "application/json" }
          const d = f.domainA
          const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}{}${"}".repeat(depth)}`
          const deepArray = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`
          const cases: ReadonlyArray<readonly [FuzzRequest, number, ReadonlyArray<number>]> = [
            // Ids spelt other than as a positive integer were read as that integer.
            [{ method: "GET", path: `/api/v4/domains/0x${d.toString(16)}`, headers: auth }, 404, [10101]],
            [{ method: "GET", path: `/api/v4/domains/0${d}`, headers: auth }, 404, [10101]],
            [{ method: "GET", path: `/api/v3/${d}/links/${f.linkA}.0`, headers: auth }, 404, [10150]],
            // Version 3 resolved "." and ".." segments that version 4 does not.
            [{ method: "GET", path: "/api/v3/domains/.", headers: auth }, 404, [10101]],
            [{ method: "GET", path: `/api/v3/${d}/links/../clicks/daily`, headers: auth }, 404, [10150]],
            // A multipart body: 500, or no answer at all when empty.
            [{ method: "POST", path: "/api/v4/tags", headers: { ...auth, "content-type": "multipart/form-data; boundary=x" }, body: "" }, 400, [10153]],
            [{ method: "POST", path: "/api/v4/domains", headers: { ...auth, "content-type": "multipart/form-data; boundary=x" }, body: "{}" }, 400, [10153]],
            // Input nested too deeply for the decode messages (and E12's echo of a bad operation, which now names
            // the operation's place instead: 10130): 500.
            [{ method: "POST", path: "/api/v4/domains", headers: json, body: `[${deepObject(3000)}]` }, 400, [10153]],
            [{ method: "PATCH", path: `/api/v4/${d}/links/${f.linkA}`, headers: json, body: `[${deepArray(20_000)}]` }, 400, [10130]],
            [{ method: "PATCH", path: `/api/v4/${d}/links/${f.linkA}`, headers: json, body: `[{"op":${deepArray(20_000)},"path":"/notes"}]` }, 400, [10130]],
            // A NUL character reaching PostgreSQL: 500.
            [{ method: "GET", path: `/api/v4/${d}/links?keyword=%00`, headers: auth }, 400, [10153]],
            [{ method: "GET", path: `/api/v4/${d}/links?tag=a%00`, headers: auth }, 400, [10153]],
            [{ method: "GET", path: `/api/v4/${d}/links/exists?alias=%00`, headers: auth }, 400, [10153]],
            [{ method: "GET", path: `/api/v4/tags?domain_id=${d}&search=%00`, headers: auth }, 400, [10153]],
            [{ method: "GET", path: `/api/v4/${d}/clicks/city?keyword=%00&city=%00`, headers: auth }, 400, [10153]],
            [{ method: "POST", path: "/api/v4/tags", headers: json, body: JSON.stringify({ domain_id: d, name: "nul", notes: "\u0000" }) }, 400, [10153]],
            [{ method: "POST", path: "/api/v4/validate_login", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "a\u0000@example.com", password: PASSWORD }) }, 401, [10001]],
            // A Host header that is no URL authority on a paginated report: 500.
            [{ method: "GET", path: `/api/v4/${d}/clicks/daily`, headers: { ...auth, host: "a b" } }, 200, []]
          ]
          for (const [request, status, codes] of cases) {
            const endpoint = ENDPOINTS.find((e) => routeOf(request.method, request.path.split("?")[0]!.replace("/api/v3/", "/api/v4/")) === e.path)
            const answer = yield* exchange(endpoint, request)
            expect([answer.status, codesOf(answer)], describeRequest(request)).toEqual([status, codes])
          }
          const report = parseJson((yield* send({ method: "GET", path: `/api/v4/${d}/clicks/daily`, headers: { ...auth, host: "a b" } })).text)
          expect(report.ok ? at(report.value, "links", "first") : undefined).toBe(`http://localhost/api/v4/${d}/clicks/daily?page=1`)
        })
      )
    })
  })
})
