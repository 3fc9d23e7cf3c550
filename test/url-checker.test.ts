import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import { AppConfig } from "../src/Config.ts"
import {
  type Resolver,
  systemResolver,
  UrlChecker,
  type UrlCheckerService,
  type UrlCheckResult
} from "../src/Links/UrlChecker.ts"

interface Hit {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
}

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void

/** A local HTTP server that records every request it receives. */
interface CountingServer {
  readonly port: number
  readonly hits: ReadonlyArray<Hit>
  readonly connections: () => Promise<number>
}

const serve = (handler: Handler, host = "127.0.0.1", port = 0) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: http.Server; readonly counting: CountingServer }, Error>((resume) => {
      const hits: Array<Hit> = []
      const server = http.createServer((request, response) => {
        hits.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers })
        handler(request, response)
      })
      server.once("error", (error) => resume(Effect.fail(error)))
      server.listen(port, host, () => {
        const address = server.address()
        const counting: CountingServer = {
          port: typeof address === "object" && address !== null ? address.port : 0,
          hits,
          connections: () =>
            new Promise((done, fail) => server.getConnections((error, count) => (error ? fail(error) : done(count))))
        }
        resume(Effect.succeed({ server, counting }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ counting }) => counting))

const status =
  (code: number, headers: http.OutgoingHttpHeaders = {}): Handler =>
  (_request, response) => {
    response.writeHead(code, headers)
    response.end()
  }

/** `/hop/N` redirects to `/hop/N+1` until `redirects` redirects were sent, then answers `final`. */
const chain =
  (redirects: number, final: number): Handler =>
  (request, response) => {
    const n = Number(/^\/hop\/(\d+)$/.exec(request.url ?? "")?.[1] ?? 0)
    if (n < redirects) status(n % 2 === 0 ? 301 : 302, { location: `/hop/${n + 1}` })(request, response)
    else status(final)(request, response)
  }

/** A port with nothing listening on it. */
const closedPort = Effect.scoped(Effect.map(serve(status(200)), (server) => server.port))

const methods = (server: CountingServer) => server.hits.map((hit) => hit.method)

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.timed(effect), ([duration, value]) => ({ value, ms: Duration.toMillis(duration) }))

const open = UrlChecker.make({ allowPrivate: true })
const strict = UrlChecker.make({ allowPrivate: false })

/** Names a test resolver answers itself; anything else goes to the system (`localhost`). */
const fixedNames =
  (names: Record<string, ReadonlyArray<string>>): Resolver =>
  (hostname) =>
    names[hostname] === undefined ? systemResolver(hostname) : Effect.succeed(names[hostname])

const attackNames = fixedNames({
  "evil.example": ["127.0.0.1"],
  "evil6.example": ["::1"],
  "mapped.example": ["::ffff:127.0.0.1"],
  "mixed.example": ["93.184.215.14", "127.0.0.1"],
  "metadata.example": ["169.254.169.254"]
})

/**
 * Every spelling of "this machine" that must be refused before a byte is sent. `reaches`: with the
 * policy lifted, the same URL does reach the trap, which shows that the refusal is what kept it out.
 */
const attackForms = (port: number): ReadonlyArray<{ readonly url: string; readonly reaches: boolean }> => [
  { url: `http://127.0.0.1:${port}/`, reaches: true },
  { url: `http://127.1:${port}/`, reaches: true },
  { url: `http://2130706433:${port}/`, reaches: true },
  { url: `http://0x7f000001:${port}/`, reaches: true },
  { url: `http://0177.0.0.1:${port}/`, reaches: true },
  { url: `http://017700000001:${port}/`, reaches: true },
  { url: `http://0x7f.1:${port}/`, reaches: true },
  { url: `http://127.0.0.1.:${port}/`, reaches: true },
  { url: `http://127.0.0.2:${port}/`, reaches: true },
  { url: `http://0.0.0.0:${port}/`, reaches: true },
  { url: `http://0:${port}/`, reaches: true },
  { url: `http://[::1]:${port}/`, reaches: true },
  { url: `http://[0:0:0:0:0:0:0:1]:${port}/`, reaches: true },
  { url: `http://[::]:${port}/`, reaches: true },
  { url: `http://[::ffff:127.0.0.1]:${port}/`, reaches: true },
  { url: `http://[::ffff:7f00:1]:${port}/`, reaches: true },
  { url: `http://[::ffff:0.0.0.0]:${port}/`, reaches: true },
  { url: `http://localhost:${port}/`, reaches: true },
  { url: `http://LOCALHOST:${port}/`, reaches: true },
  { url: `http://localhost.:${port}/`, reaches: true },
  { url: `http://app.localhost:${port}/`, reaches: true },
  { url: `http://evil.example:${port}/`, reaches: true },
  { url: `http://evil6.example:${port}/`, reaches: true },
  { url: `http://mapped.example:${port}/`, reaches: true },
  { url: `https://evil.example:${port}/`, reaches: false },
  { url: `http://mixed.example:${port}/`, reaches: false },
  { url: `http://metadata.example:${port}/`, reaches: false },
  { url: `http://[::127.0.0.1]:${port}/`, reaches: false },
  { url: `http://[64:ff9b::7f00:1]:${port}/`, reaches: false },
  { url: `http://[fe80::1]:${port}/`, reaches: false },
  { url: `http://10.0.0.1:${port}/`, reaches: false },
  { url: `http://169.254.169.254:${port}/`, reaches: false },
  { url: `http://224.0.0.1:${port}/`, reaches: false }
]

const checkAll = (checker: UrlCheckerService, urls: ReadonlyArray<string>) =>
  Effect.forEach(urls, (url) => Effect.map(checker.check(url), (result) => ({ url, result })))

describe("UrlChecker, URL_CHECK_ALLOW_PRIVATE=false", () => {
  it.scopedLive("refuses every spelling of a local address and never sends it a request", () =>
    Effect.gen(function* () {
      const trap = yield* serve(status(404), "::")
      const forms = attackForms(trap.port)
      const refusing = UrlChecker.make({ allowPrivate: false, resolve: attackNames })

      const refused = yield* checkAll(refusing, forms.map((form) => form.url))
      expect(refused).toEqual(forms.map(({ url }) => ({ url, result: "forbidden" })))
      expect(trap.hits).toEqual([])

      const reachable = forms.filter((form) => form.reaches).map((form) => form.url)
      const lifted = UrlChecker.make({ allowPrivate: true, resolve: attackNames, timeoutMs: 1000 })
      const control = yield* checkAll(lifted, reachable)
      expect(control).toEqual(reachable.map((url) => ({ url, result: "not_found" })))
      expect(trap.hits.length).toBe(reachable.length)
    })
  )

  it.scopedLive("refuses a redirect, at any hop, to a local address and never follows it", () =>
    Effect.gen(function* () {
      const trap = yield* serve(status(404), "::")
      const forms = attackForms(trap.port)
      const relay = yield* serve((request, response) => {
        const [, hop, index] = /^\/(first|second)\/(\d+)$/.exec(request.url ?? "") ?? []
        const location = hop === "first" ? `/second/${index}` : forms[Number(index)]!.url
        status(hop === "first" ? 302 : 307, { location })(request, response)
      })
      // The relay stands for a public server: its address and port are the only ones allowed.
      const onlyRelay = (address: string, port: number) => address === "127.0.0.1" && port === relay.port
      const checker = UrlChecker.make({ allowPrivate: false, policy: onlyRelay, resolve: attackNames })

      const results = yield* checkAll(checker, forms.map((_, i) => `http://127.0.0.1:${relay.port}/first/${i}`))
      expect(results.map((row) => row.result)).toEqual(forms.map(() => "forbidden"))
      expect(trap.hits).toEqual([])
      expect(methods(relay)).toEqual(forms.flatMap(() => ["HEAD", "HEAD"]))

      const lifted = UrlChecker.make({ allowPrivate: true, resolve: attackNames, timeoutMs: 1000 })
      expect(yield* lifted.check(`http://127.0.0.1:${relay.port}/first/0`)).toBe("not_found")
      expect(trap.hits.length).toBe(1)
    })
  )

  it.scopedLive("connects to the address it checked: a name that changes its answer is not looked up again", () =>
    Effect.gen(function* () {
      const checked = yield* serve((request, response) =>
        request.method === "HEAD" ? status(405)(request, response) : status(404)(request, response)
      )
      const rebound = yield* serve(status(200), "127.0.0.2", checked.port)
      let lookups = 0
      const rebinding: Resolver = (hostname) =>
        hostname === "rebind.example" ? Effect.sync(() => (++lookups === 1 ? ["127.0.0.1"] : ["127.0.0.2"])) : systemResolver(hostname)
      const checker = UrlChecker.make({
        allowPrivate: false,
        policy: (address) => address === "127.0.0.1",
        resolve: rebinding
      })

      expect(yield* checker.check(`http://rebind.example:${checked.port}/page`)).toBe("not_found")
      expect(lookups).toBe(1)
      expect(methods(checked)).toEqual(["HEAD", "GET"])
      expect(checked.hits.map((hit) => hit.headers.host)).toEqual([`rebind.example:${checked.port}`, `rebind.example:${checked.port}`])
      expect(rebound.hits).toEqual([])
    })
  )

  it.scopedLive("checks every redirect hop again: the same name resolving elsewhere on the next hop is refused", () =>
    Effect.gen(function* () {
      const first = yield* serve(status(302, { location: "/next" }))
      const rebound = yield* serve(status(404), "127.0.0.2", first.port)
      let lookups = 0
      const checker = UrlChecker.make({
        allowPrivate: false,
        policy: (address) => address === "127.0.0.1",
        resolve: () => Effect.sync(() => (++lookups === 1 ? ["127.0.0.1"] : ["127.0.0.2"]))
      })

      expect(yield* checker.check(`http://rebind.example:${first.port}/`)).toBe("forbidden")
      expect(lookups).toBe(2)
      expect(first.hits.length).toBe(1)
      expect(rebound.hits).toEqual([])
    })
  )

  it.live("a name that does not resolve is not refused: network errors never refuse", () =>
    Effect.gen(function* () {
      expect(yield* strict.check("http://nowhere.invalid/")).toBe("ok")
      const empty = UrlChecker.make({ allowPrivate: false, resolve: () => Effect.succeed([]) })
      expect(yield* empty.check("http://nowhere.example/")).toBe("ok")
    })
  )

  it.effect("URLs that are not http(s) are not checked", () =>
    Effect.gen(function* () {
      expect(yield* strict.check("not a url")).toBe("ok")
      expect(yield* strict.check("ftp://127.0.0.1/")).toBe("ok")
    })
  )

  it.scopedLive("the live layer refuses local addresses unless URL_CHECK_ALLOW_PRIVATE=true", () =>
    Effect.gen(function* () {
      const server = yield* serve(status(404))
      const url = `http://127.0.0.1:${server.port}/`
      const checkWith = (values: Record<string, string>) =>
        Effect.flatMap(UrlChecker, (checker) => checker.check(url)).pipe(
          Effect.provide(UrlChecker.layer.pipe(Layer.provide(AppConfig.layerFromMap(values))))
        )
      expect(yield* checkWith({})).toBe("forbidden")
      expect(server.hits).toEqual([])
      expect(yield* checkWith({ URL_CHECK_ALLOW_PRIVATE: "true" })).toBe("not_found")
      expect(server.hits.length).toBe(1)
    })
  )
})

/** A self-signed certificate for `shop.example` (EC P-256, valid until 2126): no client trusts it. */
const SELF_SIGNED = {
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgQFI10s0UmVYJGCmJ
h7vRIr1XK22ik/iQex5t019v1p+hRANCAASj+GBr0ev26WPGEpUVQxjOo0H3gWJ4
9H/RFA3IamQCfDAuEZNRJgRo+nGj/XgkhhmSCCZv3oPJR2wbFBe4Towd
-----END PRIVATE KEY-----`,
  cert: `-----BEGIN CERTIFICATE-----
MIIBnzCCAUSgAwIBAgIUQCRBWIfPQxoC7M7r6J6qpzLqJxcwCgYIKoZIzj0EAwIw
FzEVMBMGA1UEAwwMc2hvcC5leGFtcGxlMCAXDTI2MTEyMjA2NDcwM1oYDzIxMjYx
MDI5MDY0NzAzWjAXMRUwEwYDVQQDDAxzaG9wLmV4YW1wbGUwWTATBgcqhkjOPQIB
BggqhkjOPQMBBwNCAASj+GBr0ev26WPGEpUVQxjOo0H3gWJ49H/RFA3IamQCfDAu
EZNRJgRo+nGj/XgkhhmSCCZv3oPJR2wbFBe4Towdo2wwajAdBgNVHQ4EFgQU/lQL
xBTjzt01gocIqMdN+Vw2w6cwHwYDVR0jBBgwFoAU/lQLxBTjzt01gocIqMdN+Vw2
w6cwDwYDVR0TAQH/BAUwAwEB/zAXBgNVHREEEDAOggxzaG9wLmV4YW1wbGUwCgYI
KoZIzj0EAwIDSQAwRgIhAIUmQWGkY8G9WPNPV2eVhLutVnMjFulaZ6pMFEW0qTdA
AiEAmQk3noWyAgf3dRDf67V/wy7BIOpJ6lebeZe/muQ92/U=
-----END CERTIFICATE-----`
}

describe("UrlChecker, URL_CHECK_ALLOW_PRIVATE=true", () => {
  const answers: ReadonlyArray<readonly [number, UrlCheckResult]> = [
    [200, "ok"],
    [204, "ok"],
    [400, "ok"],
    [401, "ok"],
    [403, "ok"],
    [404, "not_found"],
    [410, "not_found"],
    [429, "ok"],
    [500, "ok"],
    [503, "ok"]
  ]
  it.scopedLive.each(answers)("HEAD answered %i is %s, without a GET", ([code, expected]) =>
    Effect.gen(function* () {
      const server = yield* serve(status(code))
      expect(yield* open.check(`http://127.0.0.1:${server.port}/x`)).toBe(expected)
      expect(methods(server)).toEqual(["HEAD"])
    })
  )

  it.scopedLive("HEAD 405 or 501 falls back to GET, whose answer decides", () =>
    Effect.gen(function* () {
      for (const [headStatus, getStatus, expected] of [
        [405, 404, "not_found"],
        [501, 410, "not_found"],
        [405, 200, "ok"]
      ] as const) {
        const server = yield* serve((request, response) =>
          status(request.method === "HEAD" ? headStatus : getStatus)(request, response)
        )
        expect(yield* open.check(`http://127.0.0.1:${server.port}/`), `${headStatus} then ${getStatus}`).toBe(expected)
        expect(methods(server)).toEqual(["HEAD", "GET"])
      }
    })
  )

  it.scopedLive("a HEAD that fails falls back to GET", () =>
    Effect.gen(function* () {
      const server = yield* serve((request, response) =>
        request.method === "HEAD" ? request.socket.destroy() : status(404)(request, response)
      )
      expect(yield* open.check(`http://127.0.0.1:${server.port}/`)).toBe("not_found")
      expect(methods(server)).toEqual(["HEAD", "GET"])
    })
  )

  it.scopedLive("GET stops reading after the headers and closes the connection", () =>
    Effect.gen(function* () {
      const server = yield* serve((request, response) => {
        if (request.method === "HEAD") return status(405)(request, response)
        response.writeHead(404, { "content-type": "text/plain" })
        const chunk = "x".repeat(64 * 1024)
        const pump = () => {
          while (!response.destroyed && response.write(chunk)) {}
        }
        response.on("drain", pump)
        pump()
      })
      const { value, ms } = yield* timed(open.check(`http://127.0.0.1:${server.port}/endless`))
      expect(value).toBe("not_found")
      expect(ms).toBeLessThan(1000)
      const deadline = Date.now() + 1000
      while ((yield* Effect.promise(server.connections)) > 0 && Date.now() < deadline) yield* Effect.sleep(20)
      expect(yield* Effect.promise(server.connections)).toBe(0)
    })
  )

  it.scopedLive("follows 301 then 302 to a 404", () =>
    Effect.gen(function* () {
      const server = yield* serve(chain(2, 404))
      expect(yield* open.check(`http://127.0.0.1:${server.port}/hop/0`)).toBe("not_found")
      expect(server.hits.map((hit) => hit.path)).toEqual(["/hop/0", "/hop/1", "/hop/2"])
    })
  )

  it.scopedLive("follows 5 redirects, and gives up after the 6th with a definite answer of ok", () =>
    Effect.gen(function* () {
      const five = yield* serve(chain(5, 404))
      expect(yield* open.check(`http://127.0.0.1:${five.port}/hop/0`)).toBe("not_found")
      expect(five.hits.length).toBe(6)

      const six = yield* serve(chain(6, 404))
      expect(yield* open.check(`http://127.0.0.1:${six.port}/hop/0`)).toBe("ok")
      expect(six.hits.length).toBe(6)

      const loop = yield* serve(status(302, { location: "/" }))
      expect(yield* open.check(`http://127.0.0.1:${loop.port}/`)).toBe("ok")
      expect(loop.hits.length).toBe(6)
    })
  )

  it.scopedLive("the redirect limit and the budget are settings", () =>
    Effect.gen(function* () {
      const server = yield* serve(chain(2, 404))
      const one = UrlChecker.make({ allowPrivate: true, maxRedirects: 1 })
      expect(yield* one.check(`http://127.0.0.1:${server.port}/hop/0`)).toBe("ok")
      expect(server.hits.length).toBe(2)

      const silent = yield* serve(() => undefined)
      const quick = UrlChecker.make({ allowPrivate: true, timeoutMs: 200 })
      const { value, ms } = yield* timed(quick.check(`http://127.0.0.1:${silent.port}/`))
      expect(value).toBe("ok")
      expect(ms).toBeGreaterThanOrEqual(190)
      expect(ms).toBeLessThan(700)
    })
  )

  it.scopedLive("resolves relative redirects against the current URL", () =>
    Effect.gen(function* () {
      const routes = new Map([
        ["/a/b/start", "next?x=1"],
        ["/a/b/next?x=1", "../up"],
        ["/a/up", "/root#fragment"]
      ])
      const server = yield* serve((request, response) => {
        const location = routes.get(request.url ?? "")
        if (location === undefined) status(404)(request, response)
        else status(302, { location })(request, response)
      })
      routes.set("/root", `//localhost:${server.port}/protocol-relative`)
      expect(yield* open.check(`http://127.0.0.1:${server.port}/a/b/start`)).toBe("not_found")
      expect(server.hits.map((hit) => hit.path)).toEqual(["/a/b/start", "/a/b/next?x=1", "/a/up", "/root", "/protocol-relative"])
    })
  )

  it.scopedLive("a redirect that cannot be followed ends the check with ok", () =>
    Effect.gen(function* () {
      for (const headers of [{ location: "ftp://127.0.0.1/file" }, { location: "mailto:someone@example.com" }, {}]) {
        const server = yield* serve(status(301, headers))
        expect(yield* open.check(`http://127.0.0.1:${server.port}/`), JSON.stringify(headers)).toBe("ok")
        expect(server.hits.length).toBe(1)
      }
    })
  )

  it.scopedLive("a server that never answers is ok after the 3 s budget", () =>
    Effect.gen(function* () {
      const silent = yield* serve(() => undefined)
      const { value, ms } = yield* timed(open.check(`http://127.0.0.1:${silent.port}/`))
      expect(value).toBe("ok")
      expect(ms).toBeGreaterThanOrEqual(2990)
      expect(ms).toBeLessThan(3300)
      const deadline = Date.now() + 1000
      while ((yield* Effect.promise(silent.connections)) > 0 && Date.now() < deadline) yield* Effect.sleep(20)
      expect(yield* Effect.promise(silent.connections)).toBe(0)
    })
  )

  it.live("a refused connection is ok", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      const { value, ms } = yield* timed(open.check(`http://127.0.0.1:${port}/`))
      expect(value).toBe("ok")
      expect(ms).toBeLessThan(1000)
    })
  )

  it.scopedLive("headers larger than 16 KiB are not read: ok", () =>
    Effect.gen(function* () {
      const server = yield* serve(status(404, { "x-padding": "p".repeat(20 * 1024) }))
      expect(yield* open.check(`http://127.0.0.1:${server.port}/`)).toBe("ok")
    })
  )

  it.scopedLive("identifies itself, keeps the host name in Host, and sends no cookies back", () =>
    Effect.gen(function* () {
      const server = yield* serve((request, response) =>
        request.url === "/"
          ? status(302, { location: "/next", "set-cookie": "session=abc; Path=/" })(request, response)
          : status(200)(request, response)
      )
      const named = UrlChecker.make({ allowPrivate: true, resolve: fixedNames({ "shop.example": ["127.0.0.1"] }) })
      expect(yield* named.check(`http://shop.example:${server.port}/`)).toBe("ok")
      expect(server.hits.map((hit) => hit.headers.host)).toEqual([`shop.example:${server.port}`, `shop.example:${server.port}`])
      for (const hit of server.hits) {
        expect(hit.headers["user-agent"]).toMatch(/^link-shortener-url-check\//)
        expect(hit.headers.cookie).toBeUndefined()
        expect(hit.headers.authorization).toBeUndefined()
      }
    })
  )

  it.scopedLive("https: the host name goes out as SNI and the certificate is verified against it", () =>
    Effect.gen(function* () {
      const names: Array<string> = []
      let requests = 0
      const server = https.createServer(
        {
          ...SELF_SIGNED,
          SNICallback: (name, done) => {
            names.push(name)
            done(null)
          }
        },
        (_request, response) => {
          requests++
          response.writeHead(404).end()
        }
      )
      const port = yield* Effect.acquireRelease(
        Effect.async<number>((resume) => {
          server.listen(0, "127.0.0.1", () => {
            const address = server.address()
            resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
          })
        }),
        () =>
          Effect.sync(() => {
            server.closeAllConnections()
            server.close()
          })
      )
      const named = UrlChecker.make({ allowPrivate: true, resolve: fixedNames({ "shop.example": ["127.0.0.1"] }) })
      expect(yield* named.check(`https://shop.example:${port}/`)).toBe("ok")
      expect(names[0]).toBe("shop.example")
      expect(requests).toBe(0)
    })
  )

  it.scopedLive("credentials in a URL are never sent", () =>
    Effect.gen(function* () {
      const server = yield* serve(status(404))
      expect(yield* open.check(`http://user:secret@127.0.0.1:${server.port}/`)).toBe("not_found")
      expect(server.hits[0]?.headers.authorization).toBeUndefined()
    })
  )
})
