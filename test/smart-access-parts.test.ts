import { describe, expect, it } from "@effect/vitest"
import { pageTags } from "../src/SmartLinks/PageTags.ts"
import { escapeHtml, passwordPage, previewPage } from "../src/Redirect/HtmlPages.ts"
import { attemptsInProcess } from "../src/Redirect/PasswordAttempts.ts"
import { cookieName, PASS_SECONDS, passwordCookies, passwordVersion } from "../src/Redirect/PasswordCookie.ts"

const HOSTILE = `</title><script>alert("x")</script>' onload='x`

describe("password passes", () => {
  const cookies = passwordCookies(Buffer.from("secret one"))
  const version = passwordVersion("$argon2id$v=19$m=19456,t=2,p=1$salt$hash")
  const now = Date.UTC(2026, 10, 27, 12)
  const pass = (setCookie: string) => setCookie.split(";")[0]!

  it("a pass is HttpOnly, SameSite=Lax, one day long, named after its link, Secure only when asked", () => {
    const plain = cookies.issue(7, version, now, false)
    expect(plain).toMatch(new RegExp(`^${cookieName(7)}=\\d+\\.[\\w-]+; Max-Age=${PASS_SECONDS}; Path=/; HttpOnly; SameSite=Lax$`))
    expect(cookies.issue(7, version, now, true)).toMatch(/; Secure$/)
    expect(cookies.valid(pass(plain), 7, version, now)).toBe(true)
    expect(cookies.valid(`other=1; ${pass(plain)}; more=2`, 7, version, now)).toBe(true)
  })

  it("a tampered, expired, other link's, other password's or other secret's pass is refused", () => {
    const value = pass(cookies.issue(7, version, now, false))
    const [name, content] = value.split("=") as [string, string]
    const [expires, signature] = content.split(".") as [string, string]
    const flipped = signature.slice(0, -2) + (signature.endsWith("A") ? "B" : "A") + signature.slice(-1)
    expect(cookies.valid(`${name}=${expires}.${flipped}`, 7, version, now)).toBe(false)
    expect(cookies.valid(`${name}=${Number(expires) + 3600}.${signature}`, 7, version, now)).toBe(false)
    expect(cookies.valid(value, 7, version, now + PASS_SECONDS * 1000)).toBe(false)
    expect(cookies.valid(value.replace(cookieName(7), cookieName(8)), 8, version, now)).toBe(false)
    expect(cookies.valid(value, 7, passwordVersion("another hash"), now)).toBe(false)
    expect(passwordCookies(Buffer.from("secret two")).valid(value, 7, version, now)).toBe(false)
    expect(cookies.valid(undefined, 7, version, now)).toBe(false)
    expect(cookies.valid(`${name}=garbage`, 7, version, now)).toBe(false)
  })
})

describe("password tries", () => {
  const allowed = { _tag: "Allowed" }
  it("the sixth try within a minute from one network waits until the first leaves the window; others are not held", () => {
    const attempts = attemptsInProcess()
    for (let i = 0; i < 5; i++) expect(attempts.attempt(7, "192.0.2.1", 1_000 + i * 1000)).toMatchObject(allowed)
    expect(attempts.attempt(8, "192.0.2.1", 10_000)).toEqual({ _tag: "Refused", by: "network", waitSeconds: 51 })
    expect(attempts.attempt(7, "192.0.2.2", 10_000)).toMatchObject(allowed)
    expect(attempts.attempt(7, "192.0.2.1", 61_000)).toMatchObject(allowed)
  })

  it("a link takes 30 tries a minute from all networks; a right answer gives its try back; a network that proved the link is held by its own budget only", () => {
    const attempts = attemptsInProcess()
    const home = attempts.attempt(7, "198.51.100.1", 0)
    if (home._tag !== "Allowed") throw new Error("refused")
    attempts.proven(7, "198.51.100.1", home.ticket, 0)
    for (let i = 0; i < 30; i++) expect(attempts.attempt(7, `2001:db8:${i}::/64`, 1_000 + i)).toMatchObject(allowed)
    expect(attempts.attempt(7, "2001:db8:ffff::/64", 2_000)).toEqual({ _tag: "Refused", by: "link", waitSeconds: 59 })
    expect(attempts.attempt(8, "2001:db8:ffff::/64", 2_000)).toMatchObject(allowed)
    for (let i = 0; i < 4; i++) expect(attempts.attempt(7, "198.51.100.1", 3_000)).toMatchObject(allowed)
    expect(attempts.attempt(7, "198.51.100.1", 3_000)).toMatchObject({ _tag: "Refused", by: "network" })
    expect(attempts.attempt(7, "2001:db8:ffff::/64", 61_000)).toMatchObject(allowed)
  })
})

describe("pages", () => {
  it("escapes every preview value, in text and attributes", () => {
    const html = previewPage({ title: HOSTILE, description: `"quoted" & <b>`, image: `https://img.example/a.png?x="y"` }, "https://s.example/a", `https://dest.example/?q="<x>"`)
    expect(html).not.toContain("<script>")
    expect(html).not.toContain(`"x"`)
    expect(html).toContain(`<meta property="og:title" content="${escapeHtml(HOSTILE)}">`)
    expect(html).toContain(`<meta property="og:description" content="&quot;quoted&quot; &amp; &lt;b&gt;">`)
    expect(html).toContain(`<meta property="og:image" content="https://img.example/a.png?x=&quot;y&quot;">`)
    expect(html).toContain(`<meta property="og:url" content="https://s.example/a">`)
    expect(html).toContain(`<meta name="twitter:card" content="summary_large_image">`)
    expect(html).toContain(`<meta http-equiv="refresh" content="0;url=https://dest.example/?q=&quot;&lt;x&gt;&quot;">`)
  })

  it("the password form posts to its own page, has a labelled field and shows a message escaped", () => {
    const html = passwordPage(`<b>no</b>`)
    expect(html).toMatch(/<form method="post">/)
    expect(html).not.toMatch(/action=|<script|src=|href=/)
    expect(html).toContain(`<label for="password">`)
    expect(html).toContain(`<p role="alert">&lt;b&gt;no&lt;/b&gt;</p>`)
  })
})

describe("a destination page's tags", () => {
  it("takes og tags first, decoding entities, resolving the image against the page", () => {
    const html = `<html><head><title>Plain</title>
      <meta property="og:title" content="Caf&eacute; &amp; &quot;Bar&quot;">
      <meta content='A &#x27;quoted&#39; description' property='og:description'>
      <meta property="og:image" content="/img/card.png">
      <meta name="description" content="ignored"></head>`
    expect(pageTags(html, "https://dest.example/page")).toEqual({
      title: "Caf&eacute; & \"Bar\"",
      description: "A 'quoted' description",
      image: "https://dest.example/img/card.png"
    })
  })

  it("falls back to the title and description, refuses non-http images, and answers undefined for a page without any", () => {
    expect(pageTags(`<title> Just a  title </title><meta name="description" content="d"><meta property="og:image" content="javascript:alert(1)">`, "https://d.example/")).toEqual({
      title: "Just a title",
      description: "d",
      image: null
    })
    expect(pageTags("<p>nothing</p>", "https://d.example/")).toBeUndefined()
  })
})
