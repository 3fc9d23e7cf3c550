import { describe, expect, it } from "@effect/vitest"
import { compileRoute } from "../src/SmartLinks/SmartRoute.ts"
import type { StoredSettings } from "../src/SmartLinks/SettingsModel.ts"

const visit = (language: string, query = "") => ({ headers: { "accept-language": language }, ip: "192.0.2.1", query })

/** A link's rules as a template would make them: the same conditions, the link's own URLs. */
const linkSettings = (n: number): StoredSettings => ({
  rules: [
    { when: { language: ["fr"] }, url: `https://example.com/${n}/fr` },
    { when: { query: { v: "b" } }, split: [{ url: `https://example.com/${n}/a`, weight: 50 }, { url: `https://example.com/${n}/b`, weight: 50 }] }
  ]
})
const targetsOf = (n: number) =>
  [`https://example.com/${n}/fr`, `https://example.com/${n}/a`, `https://example.com/${n}/b`].map((url, i) => ({ id: n * 10 + i, url }))

describe("compiled routes", () => {
  it("links with the same conditions each keep their own destinations", () => {
    const routes = [1, 2, 3].map((n) => compileRoute(linkSettings(n), targetsOf(n), { linkId: n, splitKey: "key", geo: undefined, weight: 1 })!)
    routes.forEach((route, i) => {
      const n = i + 1
      expect(route.choose(visit("fr-CA"))?.url).toBe(`https://example.com/${n}/fr`)
      expect(route.choose(visit("en"))).toBeUndefined()
      expect(route.choose(visit("en", "v=b"))?.url).toMatch(new RegExp(`^https://example\\.com/${n}/[ab]$`))
    })
  })

  it("links with the same conditions and weights in another order, or a rule that is a URL in one and a split in another, keep their own", () => {
    const options = (linkId: number) => ({ linkId, splitKey: "key", geo: undefined, weight: 1 })
    const when = { language: ["fr"] }
    const first = compileRoute(
      { rules: [{ when, split: [{ url: "https://example.com/1/a", weight: 100 }, { url: "https://example.com/1/b", weight: 0 }] }] },
      [{ id: 1, url: "https://example.com/1/a" }, { id: 2, url: "https://example.com/1/b" }],
      options(1)
    )!
    const second = compileRoute(
      { rules: [{ when, split: [{ url: "https://example.com/2/a", weight: 0 }, { url: "https://example.com/2/b", weight: 100 }] }] },
      [{ id: 3, url: "https://example.com/2/a" }, { id: 4, url: "https://example.com/2/b" }],
      options(2)
    )!
    const third = compileRoute(
      { rules: [{ when, url: "https://example.com/3/fr" }], split: [{ url: "https://example.com/3/x", weight: 0 }, { url: "https://example.com/3/y", weight: 100 }] },
      [{ id: 5, url: "https://example.com/3/fr" }, { id: 6, url: "https://example.com/3/x" }, { id: 7, url: "https://example.com/3/y" }],
      options(3)
    )!
    for (const ip of ["192.0.2.1", "192.0.2.2", "198.51.100.7"]) {
      const french = { ...visit("fr"), ip }
      expect(first.choose(french)?.id).toBe(1)
      expect(second.choose(french)?.id).toBe(4)
      expect(third.choose(french)?.id).toBe(5)
      expect(third.choose({ ...visit("en"), ip })?.id).toBe(7)
    }
  })

  it("a language tag matches itself and its subtags, not a longer tag that starts like it", () => {
    const route = compileRoute({ rules: [{ when: { language: ["en"] }, url: "https://example.com/en" }] }, [{ id: 1, url: "https://example.com/en" }], {
      linkId: 1,
      splitKey: "key",
      geo: undefined,
      weight: 1
    })!
    expect(route.choose(visit("en"))?.id).toBe(1)
    expect(route.choose(visit("en-GB;q=0.8"))?.id).toBe(1)
    expect(route.choose(visit("enx"))).toBeUndefined()
    expect(route.choose(visit("e"))).toBeUndefined()
  })

  it("agent conditions: values of one kind are alternatives, kinds must all hold, a kind not named lets an unknown agent through", () => {
    const iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
    const windowsChrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
    const linuxFirefox = "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0"
    const settings: StoredSettings = {
      rules: [
        { when: { os: ["linux", "ios"], browser: ["chrome"] }, url: "https://example.com/1" },
        { when: { device: ["tablet", "desktop"], os: ["windows"], browser: ["firefox", "chrome"] }, url: "https://example.com/2" },
        { when: { os: ["ios", "linux"] }, url: "https://example.com/3" },
        { when: { device: ["mobile"], browser: ["safari"] }, url: "https://example.com/4" },
        { when: { language: ["fr"] }, url: "https://example.com/5" }
      ]
    }
    const targets = [1, 2, 3, 4, 5].map((id) => ({ id, url: `https://example.com/${id}` }))
    const route = compileRoute(settings, targets, { linkId: 1, splitKey: "key", geo: undefined, weight: 1 })!
    const chosen = (agent: string | undefined, language = "en") =>
      route.choose({ headers: agent === undefined ? { "accept-language": language } : { "user-agent": agent, "accept-language": language }, ip: "192.0.2.1", query: "" })?.id
    expect(chosen(windowsChrome)).toBe(2)
    expect(chosen(linuxFirefox)).toBe(3)
    expect(chosen(iphone)).toBe(3)
    // Not a browser, no system: only the rule that names no agent kind holds.
    expect(chosen("curl/8.5.0", "fr")).toBe(5)
    expect(chosen(undefined, "fr")).toBe(5)
    expect(chosen(undefined)).toBeUndefined()
  })
})
