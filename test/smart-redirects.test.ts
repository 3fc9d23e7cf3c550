import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Agent, request } from "node:http"
import { ClickLog } from "../src/Clicks/ClickLog.ts"
import { call, newUser, type TestUser } from "./support/Http.ts"
import { newLink } from "./support/Fixtures.ts"
import { newShortDomain, visit } from "./support/Redirects.ts"
import { BaseUrl, TestServer } from "./support/TestServer.ts"

const AGENTS = {
  iphone: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
  ipad: "Mozilla/5.0 (iPad; CPU OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
  pixel: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.113 Mobile Safari/537.36",
  galaxy:
    "Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36",
  windowsChrome: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  windowsEdge:
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.67",
  macSafari: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15",
  linuxFirefox: "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
  macOpera:
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 OPR/110.0.0.0"
} as const

const to = (name: string) => `https://example.com/${name}`

const withSettings = (user: TestUser, body: unknown) =>
  Effect.gen(function* () {
    const domain = yield* newShortDomain(user)
    const linkId = yield* newLink(user, domain.id, { url: to("plain"), alias: "s" })
    const reply = yield* call("PUT", `/api/v4/${domain.id}/links/${linkId}/settings`, { token: user.token, body })
    if (reply.status !== 200) throw new Error(`settings refused: ${reply.text}`)
    return { domain, linkId }
  })

/** Where the short link sends a visitor with these headers (HEAD: nothing recorded). */
const whereTo = (host: string, headers: Record<string, string>, path = "/s", method = "HEAD") =>
  Effect.map(visit(host, path, { method, headers }), (reply) => reply.headers.location)

/** HEAD requests over a few kept-alive connections (10,000 visitors in a few seconds); the Location answered. */
const keptAlive = Effect.acquireRelease(
  Effect.map(BaseUrl, (base) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 8 })
    const head = (host: string, path: string, headers: Record<string, string>) =>
      Effect.async<string | undefined>((resume) => {
        const sent = request(new URL(path, base), { method: "HEAD", agent, headers: { host, ...headers } }, (response) => {
          response.resume()
          response.on("end", () => resume(Effect.succeed(response.headers.location)))
        })
        sent.on("error", (error) => resume(Effect.die(error)))
        sent.end()
      })
    return { agent, head }
  }),
  ({ agent }) => Effect.sync(() => agent.destroy())
)

describe("smart-link redirects", () => {
  layer(TestServer({ TRUST_PROXY: "127.0.0.1" }), { excludeTestServices: true })((it) => {
    it.effect("device, operating system and browser rules, first match wins, with real user agents", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const { domain } = yield* withSettings(user, {
          rules: [
            { when: { device: ["tablet"] }, url: to("tablet") },
            { when: { os: ["android"], browser: ["samsung"] }, url: to("samsung") },
            { when: { os: ["ios"] }, url: to("ios") },
            { when: { browser: ["edge"] }, url: to("edge") },
            { when: { browser: ["opera"] }, url: to("opera") },
            { when: { os: ["linux"], browser: ["firefox"] }, url: to("linux-firefox") },
            { when: { os: ["macos"], browser: ["safari"] }, url: to("mac-safari") },
            { when: { device: ["desktop"], os: ["windows"], browser: ["chrome"] }, url: to("windows-chrome") },
            { when: { device: ["mobile"] }, url: to("mobile") }
          ]
        })
        const expected: ReadonlyArray<readonly [keyof typeof AGENTS, string]> = [
          ["ipad", "tablet"],
          ["galaxy", "samsung"],
          ["iphone", "ios"],
          ["windowsEdge", "edge"],
          ["macOpera", "opera"],
          ["linuxFirefox", "linux-firefox"],
          ["macSafari", "mac-safari"],
          ["windowsChrome", "windows-chrome"],
          ["pixel", "mobile"]
        ]
        for (const [agent, destination] of expected) {
          expect(yield* whereTo(domain.name, { "user-agent": AGENTS[agent] }), agent).toBe(to(destination))
        }
        expect(yield* whereTo(domain.name, {})).toBe(to("plain"))
        expect(yield* whereTo(domain.name, { "user-agent": "curl/8.5.0" })).toBe(to("plain"))
      })
    )

    it.effect("language rules read the preferred Accept-Language by q-value; en matches en-GB", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const { domain } = yield* withSettings(user, {
          rules: [
            { when: { language: ["en-GB"] }, url: to("gb") },
            { when: { language: ["en"] }, url: to("en") },
            { when: { language: ["fr", "de-CH"] }, url: to("fr") }
          ]
        })
        const cases: ReadonlyArray<readonly [string | undefined, string]> = [
          ["en-GB,en;q=0.9", "gb"],
          ["EN-gb", "gb"],
          ["en-US,en;q=0.8", "en"],
          ["en", "en"],
          ["fr;q=0.4, en-GB;q=0.7", "gb"],
          ["de, fr;q=0.5", "plain"],
          ["de-CH", "fr"],
          ["de", "plain"],
          ["fr-CA;q=0.9, en;q=0.8", "fr"],
          ["en;q=0, fr", "fr"],
          ["*", "plain"],
          ["english", "plain"],
          [undefined, "plain"]
        ]
        for (const [header, destination] of cases) {
          const headers: Record<string, string> = header === undefined ? {} : { "accept-language": header }
          expect(yield* whereTo(domain.name, headers), header).toBe(to(destination))
        }
      })
    )

    it.effect("country, region, city and CIDR rules read the client address through the trusted proxy", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const { domain } = yield* withSettings(user, {
          rules: [
            { when: { cidr: ["10.0.0.0/8", "2001:db8::/32"] }, url: to("office") },
            { when: { city: ["hanover (buchholz-kleefeld)"] }, url: to("hanover") },
            { when: { region: ["BAVARIA"] }, url: to("bavaria") },
            { when: { country: ["jp", "GB"] }, url: to("jp-gb") },
            { when: { country: ["US"], region: ["California"], city: ["Mountain View"] }, url: to("mountain-view") },
            { when: { country: ["AU"], device: ["mobile"] }, url: to("au-mobile") }
          ]
        })
        const via = (address: string, extra: Record<string, string> = {}) => whereTo(domain.name, { "x-forwarded-for": address, ...extra })
        expect(yield* via("10.20.30.40")).toBe(to("office"))
        expect(yield* via("2001:db8:1::7")).toBe(to("office"))
        expect(yield* via("::ffff:10.1.1.1")).toBe(to("office"))
        expect(yield* via("193.99.144.80")).toBe(to("hanover"))
        expect(yield* via("2a01:4f8::1")).toBe(to("bavaria"))
        expect(yield* via("133.242.0.3")).toBe(to("jp-gb"))
        expect(yield* via("81.2.69.142")).toBe(to("jp-gb"))
        expect(yield* via("8.8.8.8")).toBe(to("mountain-view"))
        expect(yield* via("1.1.1.1", { "user-agent": AGENTS.iphone })).toBe(to("au-mobile"))
        expect(yield* via("1.1.1.1", { "user-agent": AGENTS.windowsChrome })).toBe(to("plain"))
        expect(yield* via("192.168.1.1")).toBe(to("plain"))
        // The client's own X-Forwarded-For entries are not believed: the last untrusted hop is the client.
        expect(yield* via("10.0.0.1, 8.8.8.8")).toBe(to("mountain-view"))
      })
    )

    it.effect("query parameter and time-window rules; the visitor's query is added to the destination", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const now = Math.floor(Date.now() / 1000)
        const { domain } = yield* withSettings(user, {
          rules: [
            { when: { query: { ref: "mail" } }, url: to("mail?campaign=x") },
            { when: { query: { beta: true } }, url: to("beta") },
            { when: { before: now - 10 }, url: to("past") },
            { when: { after: now + 3600 }, url: to("future") },
            { when: { after: now - 3600, before: now + 3600, query: { late: true } }, url: to("now") }
          ]
        })
        const at = (path: string) => whereTo(domain.name, {}, path)
        expect(yield* at("/s?ref=mail")).toBe(to("mail?campaign=x&ref=mail"))
        expect(yield* at("/s?ref=news")).toBe(to("plain?ref=news"))
        expect(yield* at("/s?ref=news&ref=mail")).toBe(to("mail?campaign=x&ref=news&ref=mail"))
        expect(yield* at("/s?beta")).toBe(to("beta?beta="))
        expect(yield* at("/s?late=1&qr=1")).toBe(to("now?late=1"))
        expect(yield* at("/s")).toBe(to("plain"))
      })
    )

    it.scoped("a split sends 10,000 visitors within statistical bounds of its weights, each visitor always to the same variant", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const { domain } = yield* withSettings(user, {
          rules: [{ when: { query: { inner: true } }, split: [{ url: to("r1"), weight: 90 }, { url: to("r2"), weight: 10 }] }],
          split: [
            { url: to("a"), weight: 20 },
            { url: to("b"), weight: 30 },
            { url: to("c"), weight: 50 }
          ]
        })
        const { head } = yield* keptAlive
        const visitors = Array.from({ length: 10_000 }, (_, n) => `${(n >> 16) + 11}.${(n >> 8) & 255}.${n & 255}.${(n * 7) % 251}`)
        const seen = yield* Effect.forEach(visitors, (ip) => head(domain.name, "/s", { "x-forwarded-for": ip, "user-agent": AGENTS.pixel }), {
          concurrency: 8
        })
        const counts = new Map<string, number>()
        for (const location of seen) counts.set(String(location), (counts.get(String(location)) ?? 0) + 1)
        // Binomial standard deviations at n = 10,000: 40, 46 and 50; four of them either way.
        for (const [variant, expected] of [["a", 2000], ["b", 3000], ["c", 5000]] as const) {
          expect(Math.abs((counts.get(to(variant)) ?? 0) - expected), `${variant}: ${counts.get(to(variant))}`).toBeLessThan(200)
        }
        expect([...counts.keys()].sort()).toEqual([to("a"), to("b"), to("c")])
        // Sticky: one visitor, twenty visits, one variant; another agent is another visitor.
        for (const ip of visitors.slice(0, 20)) {
          const first = yield* whereTo(domain.name, { "x-forwarded-for": ip, "user-agent": AGENTS.pixel })
          for (let n = 0; n < 5; n++) expect(yield* whereTo(domain.name, { "x-forwarded-for": ip, "user-agent": AGENTS.pixel })).toBe(first)
        }
        const inner = yield* Effect.forEach(visitors.slice(0, 1000), (ip) => head(domain.name, "/s?inner", { "x-forwarded-for": ip }), {
          concurrency: 8
        })
        const r2 = inner.filter((location) => location === to("r2?inner=")).length
        expect(inner.filter((location) => location === to("r1?inner=")).length + r2).toBe(1000)
        expect(Math.abs(r2 - 100)).toBeLessThan(45)
      })
    )

    it.effect("each click records the destination served; the destinations report counts clicks and visitors per destination", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const { domain, linkId } = yield* withSettings(user, {
          rules: [{ when: { os: ["ios"] }, url: to("ios") }],
          split: [
            { url: to("a"), weight: 0 },
            { url: to("b"), weight: 100 }
          ]
        })
        const get = (address: string, agent: string) => whereTo(domain.name, { "x-forwarded-for": address, "user-agent": agent }, "/s", "GET")
        yield* get("8.8.8.8", AGENTS.iphone)
        yield* get("8.8.8.8", AGENTS.iphone)
        yield* get("1.1.1.1", AGENTS.iphone)
        yield* get("8.8.8.8", AGENTS.windowsChrome)
        yield* get("8.8.8.8", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")
        // Rules gone: the link's own URL is served and recorded as none.
        yield* call("PUT", `/api/v4/${domain.id}/links/${linkId}/settings`, { token: user.token, body: {} })
        yield* get("8.8.8.8", AGENTS.windowsChrome)
        yield* (yield* ClickLog).flush
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ url: string | null }>`
          SELECT d.url FROM clicks c LEFT JOIN destinations d ON d.id = c.destination_id WHERE c.link_id = ${linkId} ORDER BY c.at, c.id`
        expect(rows.map((row) => row.url)).toEqual([to("ios"), to("ios"), to("ios"), to("b"), to("b"), null])
        const report = yield* call("GET", `/api/v4/${domain.id}/links/${linkId}/clicks/destinations`, { token: user.token })
        expect(report.status, report.text).toBe(200)
        expect(report.body).toEqual({
          objects: [
            { url: to("ios"), count: 3, unique: 2 },
            { url: to("b"), count: 1, unique: 1 },
            { url: to("plain"), count: 1, unique: 1 }
          ]
        })
        const v3 = yield* call("GET", `/api/v3/${domain.id}/links/${linkId}/clicks/destinations`, { token: user.token })
        expect(v3.body).toEqual(report.body)
        const past = yield* call("GET", `/api/v4/${domain.id}/links/${linkId}/clicks/destinations?from_unix=86400&to_unix=172800`, { token: user.token })
        expect(past.body).toEqual({ objects: [] })
        const bad = yield* call("GET", `/api/v4/${domain.id}/links/${linkId}/clicks/destinations?to_unix=5`, { token: user.token })
        expect(bad.status).toBe(400)
        const free = yield* newUser({ plan: "free" })
        const refused = yield* call("GET", `/api/v4/${domain.id}/links/${linkId}/clicks/destinations`, { token: free.token })
        expect(refused.status).toBe(403)
      })
    )

    it.effect("a rule's destination is answered with the link's caching: kept 90 s, or no-store on a gated link, with or without the visitor's query", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const rules = [{ when: { language: ["de"] }, url: to("de") }]
        const { domain } = yield* withSettings(user, { rules })
        const gatedLink = yield* newLink(user, domain.id, { url: to("gated"), alias: "g" })
        const saved = yield* call("PUT", `/api/v4/${domain.id}/links/${gatedLink}/settings`, { token: user.token, body: { rules, max_clicks: 1000 } })
        expect(saved.status).toBe(200)
        const german = { "accept-language": "de-DE", "user-agent": AGENTS.windowsChrome }
        for (const [path, location, caching] of [
          ["/s", to("de"), "private, max-age=90"],
          ["/s?utm_source=x", `${to("de")}?utm_source=x`, "private, max-age=90"],
          ["/g", to("de"), "no-store"],
          ["/g?utm_source=x", `${to("de")}?utm_source=x`, "no-store"]
        ] as const) {
          const reply = yield* visit(domain.name, path, { method: "HEAD", headers: german })
          expect([path, reply.headers.location, reply.headers["cache-control"]]).toEqual([path, location, caching])
        }
      })
    )
  })
})
