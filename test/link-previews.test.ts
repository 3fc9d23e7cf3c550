import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Fiber } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { PAGE_TAG_BYTES } from "../src/SmartLinks/PageTags.ts"
import { newLink } from "./support/Fixtures.ts"
import { call, newUser, type TestUser, within } from "./support/Http.ts"
import { rawRequest } from "./support/RawClient.ts"
import { clicksOf, newShortDomain, visit } from "./support/Redirects.ts"
import { FACEBOOK, FIREFOX, putSettings, SLACK } from "./support/SmartLinks.ts"
import { TestServer } from "./support/TestServer.ts"

const HOSTILE_TITLE = `"><script>alert('owned')</script>`
const CRAWLERS = [
  FACEBOOK,
  SLACK,
  "Twitterbot/1.0",
  "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
  "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
  "WhatsApp/2.23.20.0 A",
  "TelegramBot (like TwitterBot)"
]
const PEOPLE = [
  FIREFOX,
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
]

/** Local pages, closed with the scope: `/sale` and `/autumn` with preview tags of their own, `/plain` with none; every GET's path kept. */
const destinationPage = Effect.acquireRelease(
  Effect.async<{ url: string; gets: Array<string>; close: () => void }>((resume) => {
    const gets: Array<string> = []
    const server = createServer((req, res) => {
      if (req.method === "GET") gets.push(req.url ?? "")
      if (req.url === "/plain") {
        res.writeHead(200, { "content-type": "text/plain" })
        return res.end("no page here")
      }
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      if (req.url === "/autumn") return res.end(`<html><head><meta property="og:title" content="Autumn sale"></head></html>`)
      res.end(`<!doctype html><html><head><title>Fallback</title>
        <meta property="og:title" content="Spring &amp; &quot;Summer&quot; sale">
        <meta property="og:description" content="<b>Everything</b> must go">
        <meta property="og:image" content="/cards/sale.png"></head><body>hi</body></html>`)
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}/sale`, gets, close: () => server.close() }))
    })
  }),
  (server) => Effect.sync(server.close)
)

/** A page answering each GET after `delayMs` with its own og:title, counting the GETs in flight at once. */
const slowPages = (delayMs: number) =>
  Effect.acquireRelease(
    Effect.async<{ url: string; gets: Array<string>; mostAtOnce: () => number; close: () => void }>((resume) => {
      const gets: Array<string> = []
      let inFlight = 0
      let most = 0
      const server = createServer((req, res) => {
        gets.push(req.url ?? "")
        inFlight += 1
        most = Math.max(most, inFlight)
        setTimeout(() => {
          inFlight -= 1
          res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
          res.end(`<html><head><meta property="og:title" content="Page ${req.url}"></head></html>`)
        }, delayMs)
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, gets, mostAtOnce: () => most, close: () => server.close() }))
      })
    }),
    (server) => Effect.sync(server.close)
  )

/**
 * The review's pages (#43), PAGE_TAG_BYTES each: an og:title naming the path, then a tag that never
 * closes repeated, which the regular expressions took 12-37 s to read, on the redirect thread.
 */
const CRAFTED: Record<string, string> = { "/meta-a": "<meta a", "/meta": "<meta ", "/title": "<title" }
const craftedPages = Effect.acquireRelease(
  Effect.async<{ url: string; close: () => void }>((resume) => {
    const server = createServer((req, res) => {
      const head = `<meta property="og:title" content="Crafted ${req.url}">`
      const unit = CRAFTED[req.url ?? ""] ?? ""
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      res.end(head + unit.repeat(Math.ceil((PAGE_TAG_BYTES - head.length) / Math.max(unit.length, 1))))
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, close: () => server.close() }))
    })
  }),
  (server) => Effect.sync(server.close)
)

/** E12: the link's URL replaced, through API version 4 or 3. */
const changeUrl = (user: TestUser, domainId: number, linkId: number, url: string, version: 3 | 4 = 4) =>
  Effect.map(call("PATCH", `/api/v${version}/${domainId}/links/${linkId}`, { token: user.token, body: [{ op: "replace", path: "/url", value: url }] }), (reply) => {
    if (reply.status !== 200) throw new Error(`url not changed: ${reply.status} ${reply.text}`)
  })

/** What a crawler sees within five seconds that satisfies `check`, else fails. */
const crawlerSees = (host: string, alias: string, check: (reply: { status: number; text: string; headers: Record<string, unknown> }) => boolean) =>
  Effect.gen(function* () {
    const visits = visit(host, `/${alias}`, { headers: { "user-agent": FACEBOOK } })
    expect(yield* within(5000, Effect.map(visits, check))).toBeLessThan(5000)
  })

/** A new user's domain and a link of it to `url`, its alias starting with `prefix`. */
const linkTo = (url: string, prefix: string) =>
  Effect.gen(function* () {
    const user = yield* newUser()
    const domain = yield* newShortDomain(user)
    const alias = `${prefix}${Date.now().toString(36)}`
    const id = yield* newLink(user, domain.id, { url, alias })
    return { user, domain, alias, id }
  })

describe("social previews", () => {
  layer(TestServer({ URL_CHECK_ALLOW_PRIVATE: "true" }), { excludeTestServices: true })((it) => {
    it.effect("crawlers get escaped Open Graph and Twitter tags and a refresh to the destination; people get the redirect", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const alias = `card${Date.now().toString(36)}`
        const id = yield* newLink(user, domain.id, { url: "https://dest.example/?a=1&b=2", alias })
        yield* putSettings(user, domain.id, id, {
          og: { title: HOSTILE_TITLE, description: `It's <i>"great"</i>`, image: "https://img.example/card.png?size=large&v=2" }
        })
        for (const agent of CRAWLERS) {
          const page = yield* visit(domain.name, `/${alias}`, { headers: { "user-agent": agent } })
          expect(page.status, agent).toBe(200)
          expect(page.headers["content-type"]).toBe("text/html; charset=utf-8")
          expect(page.headers.location).toBeUndefined()
          expect(page.text).not.toContain("<script>")
          expect(page.text).toContain(`<meta property="og:title" content="&quot;&gt;&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;">`)
          expect(page.text).toContain(`<meta property="og:description" content="It&#39;s &lt;i&gt;&quot;great&quot;&lt;/i&gt;">`)
          expect(page.text).toContain(`<meta property="og:image" content="https://img.example/card.png?size=large&amp;v=2">`)
          expect(page.text).toContain(`<meta property="og:url" content="http://${domain.name}/${alias}">`)
          expect(page.text).toContain(`<meta name="twitter:card" content="summary_large_image">`)
          expect(page.text).toContain(`<meta http-equiv="refresh" content="0;url=https://dest.example/?a=1&amp;b=2">`)
        }
        for (const agent of PEOPLE) {
          const redirect = yield* visit(domain.name, `/${alias}`, { headers: { "user-agent": agent } })
          expect([redirect.status, redirect.headers.location], agent).toEqual([301, "https://dest.example/?a=1&b=2"])
        }
        const clicks = yield* clicksOf(id)
        expect(clicks.filter((click) => !click.bot).length).toBe(PEOPLE.length)
      })
    )

    it.effect("without og, the tags are taken once from the destination page when the settings are saved", () =>
      Effect.gen(function* () {
        const page = yield* destinationPage
        const { user, domain, alias, id } = yield* linkTo(page.url, "taken")
        const plain = yield* visit(domain.name, `/${alias}`, { headers: { "user-agent": FACEBOOK } })
        expect([plain.status, plain.headers.location]).toEqual([301, page.url])
        yield* putSettings(user, domain.id, id, { max_clicks: 1000 })
        const preview = visit(domain.name, `/${alias}`, { headers: { "user-agent": FACEBOOK } })
        expect(yield* within(5000, Effect.map(preview, (reply) => reply.status === 200))).toBeLessThan(5000)
        const card = yield* preview
        expect(card.text).toContain(`<meta property="og:title" content="Spring &amp; &quot;Summer&quot; sale">`)
        expect(card.text).toContain(`<meta property="og:description" content="&lt;b&gt;Everything&lt;/b&gt; must go">`)
        expect(card.text).toContain(`<meta property="og:image" content="${page.url.replace("/sale", "/cards/sale.png")}">`)
        const person = yield* visit(domain.name, `/${alias}`, { headers: { "user-agent": FIREFOX } })
        expect([person.status, person.headers.location]).toEqual([301, page.url])
      }).pipe(Effect.scoped)
    )

    it.effect("a new URL has its tags taken again, or forgotten when its page has none; a link with og fetches nothing", () =>
      Effect.gen(function* () {
        const page = yield* destinationPage
        const { user, domain, alias, id } = yield* linkTo(page.url, "moved")
        yield* putSettings(user, domain.id, id, { max_clicks: 1000 })
        yield* crawlerSees(domain.name, alias, (reply) => reply.text.includes("Spring &amp;"))

        const autumn = page.url.replace("/sale", "/autumn")
        yield* changeUrl(user, domain.id, id, autumn)
        yield* crawlerSees(domain.name, alias, (reply) => reply.text.includes(`<meta property="og:title" content="Autumn sale">`))
        const card = yield* visit(domain.name, `/${alias}`, { headers: { "user-agent": FACEBOOK } })
        expect(card.text).not.toContain("og:description")
        expect(card.text).not.toContain("og:image")
        expect(card.text).toContain(`url=${autumn}`)

        // A page without tags: those of the last one are not kept.
        const plain = page.url.replace("/sale", "/plain")
        yield* changeUrl(user, domain.id, id, plain)
        expect(yield* within(5000, Effect.sync(() => page.gets.includes("/plain")))).toBeLessThan(5000)
        yield* Effect.sleep("200 millis")
        yield* crawlerSees(domain.name, alias, (reply) => reply.status === 301 && reply.headers.location === plain)

        // The user's own og: a new URL is not fetched for tags, and the og stays.
        const own = `own${Date.now().toString(36)}`
        const ownId = yield* newLink(user, domain.id, { url: page.url, alias: own })
        yield* putSettings(user, domain.id, ownId, { og: { title: "Mine" } })
        const fetched = page.gets.length
        yield* changeUrl(user, domain.id, ownId, `${autumn}?own`)
        yield* Effect.sleep("500 millis")
        expect(page.gets.slice(fetched).filter((path) => path === "/autumn?own")).toEqual([])
        yield* crawlerSees(domain.name, own, (reply) => reply.text.includes(`content="Mine"`) && reply.text.includes("/autumn?own"))
      }).pipe(Effect.scoped)
    )

    it.effect("settings saved for many links at once fetch their destinations four at a time, each link's once, and every link gets its tags", () =>
      Effect.gen(function* () {
        const pages = yield* slowPages(1500)
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const stamp = Date.now().toString(36)
        const links = yield* Effect.forEach(Array.from({ length: 10 }, (_, n) => n), (n) =>
          Effect.map(newLink(user, domain.id, { url: `${pages.url}/p${n}`, alias: `bulk${n}x${stamp}` }), (id) => ({ n, id }))
        )
        // All saved within the first fetches' 1.5 s; the first link's twice more meanwhile: its fetch
        // under way, the next is queued (the destination is read again) and the third joins it.
        yield* Effect.forEach(links, ({ id }) => putSettings(user, domain.id, id, { max_clicks: 1000 }), { concurrency: "unbounded" })
        yield* putSettings(user, domain.id, links[0]!.id, { max_clicks: 2000 })
        yield* putSettings(user, domain.id, links[0]!.id, { max_clicks: 3000 })
        for (const { n } of links) {
          yield* crawlerSees(domain.name, `bulk${n}x${stamp}`, (reply) => reply.text.includes(`content="Page /p${n}"`))
        }
        yield* Effect.sleep("400 millis")
        expect(pages.mostAtOnce()).toBe(4)
        expect(pages.gets.filter((path) => path === "/p0")).toHaveLength(2)
        expect(pages.gets.filter((path) => path !== "/p0").sort()).toEqual(links.slice(1).map(({ n }) => `/p${n}`).sort())
      }).pipe(Effect.scoped)
    )

    it.effect("while a member saves crafted pages (settings, URL through v4 and v3), another tenant's cached redirects keep answering", () =>
      Effect.gen(function* () {
        const pages = yield* craftedPages
        const other = yield* linkTo("https://other.example/", "other")
        // Waiting as long as the thread may be held, so that a held thread shows as a latency.
        const get = (host: string, path: string, agent: string) =>
          rawRequest({ method: "GET", path, headers: { host, "user-agent": agent }, chunks: [], end: true, timeoutMs: 60_000 })
        const probe = Effect.map(get(other.domain.name, `/${other.alias}`, FIREFOX), (reply) => {
          if (reply._tag !== "Response" || reply.status !== 301) throw new Error(`the other tenant's redirect: ${JSON.stringify(reply)}`)
        })
        yield* probe
        // The time from one answer to the next, 10 ms apart (so that the probes leave the shared cores
        // to the fetches and the thread): the test shares the server's thread, so a held thread shows
        // here wherever it falls, not only in a request under way.
        const gaps: Array<number> = []
        let probing = true
        let answered = performance.now()
        const prober = yield* Effect.fork(
          Effect.whileLoop({
            while: () => probing,
            body: () => Effect.zipRight(Effect.sleep("10 millis"), probe),
            step: () => {
              const now = performance.now()
              gaps.push(now - answered)
              answered = now
            }
          })
        )
        const { user, domain, alias, id } = yield* linkTo(`${pages.url}/meta-a`, "crafted")
        /** Ms until a crawler sees the page's title (its tags were read and stored); Infinity past 45 s. */
        const taken = (path: string) =>
          within(45_000, Effect.map(get(domain.name, `/${alias}`, FACEBOOK), (reply) => reply._tag === "Response" && reply.text.includes(`content="Crafted ${path}"`)))
        const saves = [
          { path: "/meta-a", save: putSettings(user, domain.id, id, { max_clicks: 1000 }) },
          { path: "/meta", save: changeUrl(user, domain.id, id, `${pages.url}/meta`) },
          { path: "/title", save: changeUrl(user, domain.id, id, `${pages.url}/title`, 3) }
        ]
        const seen: Array<number> = []
        for (const { path, save } of saves) {
          yield* save
          seen.push(yield* taken(path))
          if (seen.at(-1) === Number.POSITIVE_INFINITY) break
        }
        probing = false
        yield* Fiber.join(prober)

        const sorted = gaps.sort((a, b) => a - b)
        const at = (share: number) => sorted[Math.floor((sorted.length - 1) * share)]!.toFixed(0)
        console.log(`other tenant's redirects while crafted pages were read: ${sorted.length}, ms between answers p50 ${at(0.5)}, p99 ${at(0.99)}, max ${at(1)}`)
        // The regular expressions held the thread 12-37 s per page; answers come 10-20 ms apart, 100s under load.
        expect(sorted.at(-1)!).toBeLessThan(2000)
        expect(sorted[Math.floor((sorted.length - 1) * 0.99)]!).toBeLessThan(1000)
        expect(sorted.length).toBeGreaterThan(20)
        expect(seen.filter((ms) => ms < 45_000)).toHaveLength(3)
      }).pipe(Effect.scoped),
      180_000
    )

    it.effect("og:url is the link's short link, built when the link is loaded: the alias as stored, the domain's scheme as it is now", () =>
      Effect.gen(function* () {
        const { user, domain, alias, id } = yield* linkTo("https://dest.example/", "Card")
        yield* putSettings(user, domain.id, id, { og: { title: "Cased" } })
        for (const asked of [alias, alias.toUpperCase(), alias.toLowerCase()]) {
          const page = yield* visit(domain.name, `/${asked}`, { headers: { "user-agent": FACEBOOK } })
          expect(page.text, asked).toContain(`<meta property="og:url" content="http://${domain.name}/${alias}">`)
        }
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE domains SET has_ssl = true WHERE id = ${domain.id}`
        yield* crawlerSees(domain.name, alias.toLowerCase(), (reply) => reply.text.includes(`<meta property="og:url" content="https://${domain.name}/${alias}">`))
      })
    )
  })
})
