// Also on a PostgreSQL server: cache misses and the change feed go through a pool of several connections.
import { describe, expect, it, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ClickLog } from "../src/Clicks/ClickLog.ts"
import { Effect } from "effect"
import { ENTRY_OVERHEAD_BYTES, Lru, redirectCacheDefaults } from "../src/Redirect/RedirectCache.ts"
import { call, newUser, numberAt } from "./support/Http.ts"
import { newLink } from "./support/Fixtures.ts"
import { parseExposition, samplesOf, valueOf } from "./support/Prometheus.ts"
import { rawExchange, rawStatus } from "./support/RawClient.ts"
import { clicksOf, newShortDomain, visit } from "./support/Redirects.ts"
import { TestServer } from "./support/TestServer.ts"

const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

const clickCount = (user: { token: string }, domainId: number, linkId: number) =>
  Effect.map(call("GET", `/api/v4/${domainId}/links/${linkId}`, { token: user.token }), (reply) =>
    numberAt(reply.body, "objects", 0, "click_count")
  )

describe("redirects", () => {
  layer(TestServer({ TRUST_PROXY: "127.0.0.1" }), { excludeTestServices: true })((it) => {
    it.effect("an active link answers its redirect type with Location and Cache-Control, alias case ignored", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        yield* newLink(user, domain.id, { url: "https://example.com/landing", alias: "Promo" })
        yield* newLink(user, domain.id, { url: "https://example.com/temp", alias: "temp", redirect_type: 307 })
        const first = yield* visit(domain.name, "/Promo")
        expect(first.status).toBe(301)
        expect(first.headers.location).toBe("https://example.com/landing")
        expect(first.headers["cache-control"]).toBe("private, max-age=90")
        const lower = yield* visit(`${domain.name.toUpperCase()}:8080`, "/promo/")
        expect([lower.status, lower.headers.location]).toEqual([301, "https://example.com/landing"])
        const temporary = yield* visit(domain.name, "/temp")
        expect([temporary.status, temporary.headers.location]).toEqual([307, "https://example.com/temp"])
      })
    )

    it.effect("visitor query parameters are merged after the link's own, which win; qr is not forwarded", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        yield* newLink(user, domain.id, { url: "https://example.com/p?a=1&s=x%20y#top", alias: "merge" })
        yield* newLink(user, domain.id, { url: "https://example.com/plain", alias: "plain" })
        const merged = yield* visit(domain.name, "/merge?a=2&b=3&qr=1")
        expect(merged.headers.location).toBe("https://example.com/p?a=1&s=x%20y&b=3#top")
        const plain = yield* visit(domain.name, "/plain?utm_source=mail&x=%E2%9C%93")
        expect(plain.headers.location).toBe("https://example.com/plain?utm_source=mail&x=%E2%9C%93")
        const onlyQr = yield* visit(domain.name, "/plain?qr=1")
        expect(onlyQr.headers.location).toBe("https://example.com/plain")
        expect(() => new URL(String(merged.headers.location))).not.toThrow()
      })
    )

    it.effect("the root goes to the homepage, unknown aliases to url_404, or plain 404s without them", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const set = yield* newShortDomain(user, { homepage: "https://home.example/", url_404: "https://home.example/missing" })
        const bare = yield* newShortDomain(user)
        const root = yield* visit(set.name, "/")
        expect([root.status, root.headers.location]).toEqual([302, "https://home.example/"])
        const unknown = yield* visit(set.name, "/nope")
        expect([unknown.status, unknown.headers.location]).toEqual([302, "https://home.example/missing"])
        const odd = yield* visit(set.name, "/a/b/c?x=1")
        expect([odd.status, odd.headers.location]).toEqual([302, "https://home.example/missing"])
        expect((yield* visit(bare.name, "/")).status).toBe(404)
        expect((yield* visit(bare.name, "/nope")).status).toBe(404)
        expect((yield* visit(bare.name, "/%00%ff")).status).toBe(404)
      })
    )

    it.effect("an unknown alias costs one database lookup, then none: scanners are answered from the negative cache", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const lookups = Effect.map(call("GET", "/metrics"), (reply) => valueOf(parseExposition(reply.text), "redirect_lookups_total"))
        const before = yield* lookups
        for (const alias of ["scan1", "scan2", "SCAN3"]) expect((yield* visit(domain.name, `/${alias}`)).status).toBe(404)
        const afterFirst = yield* lookups
        expect(afterFirst - before).toBe(3)
        for (const alias of ["scan1", "SCAN2", "scan3"]) expect((yield* visit(domain.name, `/${alias}`)).status).toBe(404)
        expect((yield* lookups) - afterFirst).toBe(0)
      })
    )

    it.effect("/metrics follows a click across the threads: cache hits, clicks handed over and written, both threads' event-loop delay", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        yield* newLink(user, domain.id, { alias: "counted" })
        const read = Effect.map(call("GET", "/metrics"), (reply) => parseExposition(reply.text))
        // Clicks of the tests before are written first: the counters are the process's.
        yield* (yield* ClickLog).flush
        const before = yield* read
        for (let n = 0; n < 5; n++) expect((yield* visit(domain.name, "/counted")).status).toBe(301)
        yield* (yield* ClickLog).flush
        // The gauges describe whole seconds: the next one has both threads' figures.
        yield* Effect.sleep("1100 millis")
        const after = yield* read
        const grew = (name: string) => valueOf(after, name) - valueOf(before, name)
        expect(grew("redirect_cache_hits_total")).toBe(4)
        expect(grew("redirect_lookups_total")).toBe(1)
        expect(grew("clicks_handed_over_total")).toBe(5)
        expect(grew("clicks_written_total")).toBe(5)
        expect(grew("clicks_dropped_total")).toBe(0)
        expect(valueOf(after, "click_worker_restarts_total")).toBe(0)
        expect(valueOf(after, "click_buffer_depth")).toBe(0)
        for (const thread of ["redirect", "clicks"]) {
          expect(samplesOf(after, "event_loop_delay_seconds", { thread })).toHaveLength(3)
          const max = valueOf(after, "event_loop_delay_seconds", { thread, quantile: "1" })
          expect(max, thread).toBeGreaterThanOrEqual(0)
          expect(max, thread).toBeLessThan(1)
          expect(valueOf(after, "event_loop_delay_seconds", { thread, quantile: "0.5" })).toBeLessThanOrEqual(max)
        }
      })
    )

    it.effect("archived links go to the homepage (or 404), deleted ones are unknown, a disabled domain answers 404", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user, { homepage: "https://home.example/", url_404: "https://home.example/404" })
        const archived = yield* newLink(user, domain.id, { alias: "old" })
        const deleted = yield* newLink(user, domain.id, { alias: "gone" })
        expect((yield* visit(domain.name, "/old")).status).toBe(301)
        expect((yield* visit(domain.name, "/gone")).status).toBe(301)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE links SET status = 'archived' WHERE id = ${archived}`
        yield* sql`UPDATE links SET status = 'deleted' WHERE id = ${deleted}`
        const old = yield* visit(domain.name, "/old")
        expect([old.status, old.headers.location]).toEqual([302, "https://home.example/"])
        const gone = yield* visit(domain.name, "/gone")
        expect([gone.status, gone.headers.location]).toEqual([302, "https://home.example/404"])
        const disable = yield* call("PATCH", `/api/v4/domains/${domain.id}`, {
          token: user.token,
          body: { op: "replace", path: "status", value: "disabled" }
        })
        expect(disable.status).toBe(200)
        expect((yield* visit(domain.name, "/")).status).toBe(404)
        expect((yield* visit(domain.name, "/old")).status).toBe(404)
      })
    )

    it.effect("API and operational paths on a short domain reach the API; other hosts never redirect; only GET and HEAD", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        yield* newLink(user, domain.id, { alias: "here" })
        const api = yield* visit(domain.name, "/api/v4/error_codes")
        expect(api.status).toBe(401)
        expect(JSON.parse(api.text)).toMatchObject({ errors: [{ code: 10000 }] })
        expect((yield* visit(domain.name, "/healthz")).status).toBe(200)
        const other = yield* visit("unregistered.example", "/here")
        expect(other.status).toBe(404)
        expect(JSON.parse(other.text)).toMatchObject({ errors: [{ code: 10151 }] })
        const post = yield* visit(domain.name, "/here", { method: "POST" })
        expect([post.status, post.headers.allow]).toEqual([405, "GET, HEAD"])
      })
    )

    it.effect("two Host fields are 400 on redirect and API paths; an absolute-form target wins over Host", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        yield* newLink(user, domain.id, { url: "https://example.com/abs", alias: "abs" })
        const send = (target: string, ...headers: ReadonlyArray<string>) =>
          rawExchange(`GET ${target} HTTP/1.1\r\n${headers.map((header) => `${header}\r\n`).join("")}Connection: close\r\n\r\n`)
        for (const path of ["/abs", "/api/v4/error_codes", "/healthz"]) {
          expect(rawStatus(yield* send(path, `Host: ${domain.name}`, `Host: ${domain.name}`))).toBe(400)
          expect(rawStatus(yield* send(path, "Host: unregistered.example", `host: ${domain.name}`))).toBe(400)
        }
        const absolute = yield* send(`http://${domain.name}/abs?x=1`, "Host: unregistered.example")
        expect(rawStatus(absolute)).toBe(301)
        expect(absolute).toContain("location: https://example.com/abs?x=1")
        const toApi = yield* send("http://unregistered.example/abs", `Host: ${domain.name}`)
        expect(rawStatus(toApi)).toBe(404)
        expect(toApi).toContain('"code":10151')
        expect(rawStatus(yield* send(`http://${domain.name}/healthz`, "Host: unregistered.example"))).toBe(200)
        expect(rawStatus(yield* send(`ftp://${domain.name}/abs`, "Host: unregistered.example"))).toBe(400)
      })
    )

    it.effect("changes through the API are seen by the next redirect: new alias, new url, a link made after a miss", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user, { url_404: "https://home.example/404" })
        expect((yield* visit(domain.name, "/later")).headers.location).toBe("https://home.example/404")
        yield* newLink(user, domain.id, { url: "https://example.com/later", alias: "later" })
        expect((yield* visit(domain.name, "/later")).headers.location).toBe("https://example.com/later")
        const id = yield* newLink(user, domain.id, { url: "https://example.com/v1", alias: "moving" })
        expect((yield* visit(domain.name, "/moving")).headers.location).toBe("https://example.com/v1")
        const patch = yield* call("PATCH", `/api/v4/${domain.id}/links/${id}`, {
          token: user.token,
          body: [
            { op: "replace", path: "/url", value: "https://example.com/v2" },
            { op: "replace", path: "/alias", value: "moved" }
          ]
        })
        expect(patch.status).toBe(200)
        expect((yield* visit(domain.name, "/moving")).headers.location).toBe("https://home.example/404")
        expect((yield* visit(domain.name, "/moved")).headers.location).toBe("https://example.com/v2")
      })
    )

    it.effect("a GET records one click with device, referrer host, QR flag, country and a hashed IP; HEAD records nothing", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const id = yield* newLink(user, domain.id, { alias: "counted" })
        yield* visit(domain.name, "/counted?qr=1", {
          headers: { "user-agent": IPHONE, referer: "https://News.Example.com/story?id=1", "x-forwarded-for": "8.8.8.8" }
        })
        yield* visit(domain.name, "/counted", { headers: { "x-forwarded-for": "8.8.8.8" } })
        yield* visit(domain.name, "/counted", { method: "HEAD", headers: { "user-agent": IPHONE } })
        const clicks = yield* clicksOf(id)
        expect(clicks).toHaveLength(2)
        expect(clicks[0]).toMatchObject({
          domain_id: domain.id,
          device: "mobile",
          referrer: "news.example.com",
          qr: true,
          bot: false,
          country: "US",
          user_agent: IPHONE
        })
        expect(clicks[1]).toMatchObject({ device: "other", referrer: "direct", qr: false, user_agent: "" })
        expect(clicks[0]?.ip_hash).toBe(clicks[1]?.ip_hash)
        expect(clicks[0]?.ip_hash).not.toContain("8.8.8.8")
        expect(yield* clickCount(user, domain.id, id)).toBe(2)
      })
    )

    it.effect("bots are recorded with a flag and left out of click_count; the client IP needs a trusted proxy", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const id = yield* newLink(user, domain.id, { alias: "botty" })
        yield* visit(domain.name, "/botty", { headers: { "user-agent": GOOGLEBOT } })
        yield* visit(domain.name, "/botty", { headers: { "x-forwarded-for": "1.2.3.4, 8.8.8.8" } })
        // Both visits can fall in one millisecond, where the stored order is not defined: bot first.
        const clicks = [...(yield* clicksOf(id))].sort((a, b) => Number(b.bot) - Number(a.bot))
        expect(clicks.map((click) => [click.device, click.bot])).toEqual([["bot", true], ["other", false]])
        expect(clicks[1]?.country).toBe("US")
        expect(yield* clickCount(user, domain.id, id)).toBe(1)
      })
    )
  })

  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("without TRUST_PROXY, X-Forwarded-For is ignored: the socket address is the client", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const id = yield* newLink(user, domain.id, { alias: "direct" })
        yield* visit(domain.name, "/direct", { headers: { "x-forwarded-for": "8.8.8.8" } })
        const [click] = yield* clicksOf(id)
        expect(click?.country).toBeNull()
      })
    )
  })
})

describe("the redirect caches' LRU", () => {
  const keyOf = (n: number, length: number) => `7:${String(n).padStart(length - 2, "a")}`

  it("evicts by bytes as well as by count: long keys make room sooner than the count says", () => {
    const lru = new Lru<true>(100_000, 10_000)
    for (let n = 0; n < 1_000; n++) lru.set(keyOf(n, 42), true)
    expect(lru.size).toBe(Math.floor(10_000 / (42 + ENTRY_OVERHEAD_BYTES)))
    expect(lru.bytes).toBe(lru.size * (42 + ENTRY_OVERHEAD_BYTES))
    expect(lru.get(keyOf(0, 42))).toBeUndefined()
    expect(lru.get(keyOf(999, 42))).toBe(true)
    const short = new Lru<true>(50, 10_000)
    for (let n = 0; n < 1_000; n++) short.set(keyOf(n, 6), true)
    expect(short.size).toBe(50)
  })

  it("evicts the oldest entry not read since it was last passed over: a read one gets a second chance", () => {
    const lru = new Lru<number>(3)
    for (const n of [1, 2, 3]) lru.set(`k${n}`, n)
    expect(lru.get("k1")).toBe(1)
    lru.set("k4", 4)
    // k1 was read: passed over (its mark cleared, now the youngest but k4); k2 is evicted.
    expect([lru.size, lru.get("k2"), lru.get("k3")]).toEqual([3, undefined, 3])
    lru.set("k5", 5)
    // k3 was read just now and is passed over; k1's mark was cleared when it was passed over: it goes.
    expect([lru.get("k1"), lru.get("k3"), lru.get("k4"), lru.get("k5")]).toEqual([undefined, 3, 4, 5])
    // Every entry read: one pass clears the marks, the oldest (k4) goes and the new entry stays.
    lru.set("k6", 6)
    expect([lru.size, lru.get("k4"), lru.get("k3"), lru.get("k5"), lru.get("k6")]).toEqual([3, undefined, 3, 5, 6])
    const heavy = new Lru<true>(100, 3 * (2 + ENTRY_OVERHEAD_BYTES))
    for (let n = 10; n < 100; n++) {
      heavy.set(`${n}`, true)
      heavy.get(`${n}`)
    }
    expect([heavy.size, heavy.bytes]).toEqual([3, 3 * (2 + ENTRY_OVERHEAD_BYTES)])
  })

  it("counts a key set twice once, and gives its bytes back when it is deleted or cleared", () => {
    const lru = new Lru<true>(10, 1_000)
    lru.set("7:alias", true)
    lru.set("7:alias", true)
    expect(lru.bytes).toBe(7 + ENTRY_OVERHEAD_BYTES)
    lru.delete("7:alias")
    lru.delete("7:alias")
    expect(lru.bytes).toBe(0)
    lru.set("7:other", true)
    lru.clear()
    expect([lru.size, lru.bytes]).toEqual([0, 0])
  })

  it("refuses an entry heavier than the whole bound without evicting the others, forgetting only the key's old value", () => {
    const lru = new Lru<true>(10, 3 * (7 + ENTRY_OVERHEAD_BYTES))
    for (const alias of ["7:aaaaa", "7:bbbbb", "7:ccccc"]) lru.set(alias, true)
    lru.set(`7:${"x".repeat(3 * (7 + ENTRY_OVERHEAD_BYTES))}`, true)
    expect([lru.size, lru.bytes, lru.get("7:aaaaa"), lru.get("7:ccccc")]).toEqual([3, 3 * (7 + ENTRY_OVERHEAD_BYTES), true, true])
    const weigh = (key: string, url: string) => key.length + ENTRY_OVERHEAD_BYTES + url.length
    const links = new Lru<string>(10, 1_000, weigh)
    links.set("7:short", "https://a.example/")
    links.set("7:other", "https://b.example/")
    links.set("7:short", `https://a.example/${"x".repeat(1_000)}`)
    expect([links.size, links.get("7:short"), links.get("7:other")]).toEqual([1, undefined, "https://b.example/"])
  })

  it("the negative cache of the redirect path is bounded at 8 MiB as well as 100,000 entries", () => {
    expect(redirectCacheDefaults.unknownAliases).toBe(100_000)
    expect(redirectCacheDefaults.unknownAliasBytes).toBe(8 * 1024 * 1024)
  })

  it("weighs entries as told: links by their key and long URL, bounded at 64 MiB as well as 100,000 entries", () => {
    const weigh = (key: string, url: string) => key.length + ENTRY_OVERHEAD_BYTES + url.length
    const lru = new Lru<string>(100_000, 100_000, weigh)
    const long = `https://example.com/${"x".repeat(4000)}`
    for (let n = 0; n < 100; n++) lru.set(keyOf(n, 10), long)
    expect(lru.size).toBe(Math.floor(100_000 / (10 + ENTRY_OVERHEAD_BYTES + long.length)))
    // Replacing an entry gives its old weight back before counting the new one.
    lru.set(keyOf(99, 10), "https://example.com/")
    expect(lru.bytes).toBe((lru.size - 1) * (10 + ENTRY_OVERHEAD_BYTES + long.length) + 10 + ENTRY_OVERHEAD_BYTES + 20)
    expect(redirectCacheDefaults.links).toBe(100_000)
    expect(redirectCacheDefaults.linkBytes).toBe(64 * 1024 * 1024)
  })
})
