import { describe, expect, it } from "vitest"
import { ClickEncoder, handOver, MAX_REFERER, MAX_USER_AGENT, type RawClick, unpack } from "../src/Clicks/ClickHandover.ts"

const click = (n: number, fields: Partial<RawClick> = {}): RawClick => ({
  at: 1_764_000_000_000 + n,
  linkId: 9_007_199_254_740_991 - n,
  domainId: n + 1,
  ip: n % 2 === 0 ? `192.0.2.${n % 250}` : "2001:db8::1",
  userAgent: n % 3 === 0 ? undefined : `Mozilla/5.0 (n ${n})`,
  referer: n % 5 === 0 ? undefined : `https://news.example/${n}`,
  qr: n % 7 === 0,
  // A smart link's destination on some clicks; the link's own URL (none) on the others.
  ...(n % 4 === 1 ? { destinationId: 2_147_483_000 + n } : {}),
  ...fields
})

describe("clicks handed between threads as bytes", () => {
  it("read back field for field, absent headers as absent, across a buffer that grows", () => {
    const clicks = Array.from({ length: 5000 }, (_, n) => click(n))
    const batch = handOver(3, clicks)
    expect(batch.seq).toBe(3)
    expect(batch.count).toBe(5000)
    expect(batch.again).toBe(false)
    expect(unpack(batch)).toEqual(clicks)
  })

  it("keep text that is not ASCII (Latin-1 header bytes, emoji) and an empty user agent", () => {
    const odd = [
      click(1, { userAgent: "Navigateur \u00e9\u00ff/1.0", referer: "https://b\u00fccher.example/\u{1F600}" }),
      click(2, { userAgent: "", referer: "" })
    ]
    expect(unpack(handOver(0, odd))).toEqual(odd)
  })

  it("cut user agents and Referers at the lengths the writer keeps, never inside a surrogate pair", () => {
    const longAgent = "a".repeat(MAX_USER_AGENT - 1) + "\u{1F600}" + "b".repeat(100)
    const longReferer = "https://x.example/" + "r".repeat(MAX_REFERER * 2)
    const [read] = unpack(handOver(0, [click(1, { userAgent: longAgent, referer: longReferer })]))
    expect(read?.userAgent).toBe("a".repeat(MAX_USER_AGENT - 1))
    expect(read?.referer).toBe(longReferer.slice(0, MAX_REFERER))
  })

  it("start each batch empty after a take, with a nonce of its own", () => {
    const encoder = new ClickEncoder()
    encoder.add(click(1))
    encoder.add(click(2))
    const first = encoder.take(0)
    expect(encoder.count).toBe(0)
    encoder.add(click(3))
    const second = encoder.take(1)
    expect(unpack(first)).toEqual([click(1), click(2)])
    expect(unpack(second)).toEqual([click(3)])
    expect(second.nonce).not.toBe(first.nonce)
    expect(first.nonce).toMatch(/^[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{6}$/)
  })
})
