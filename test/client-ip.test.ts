import { describe, expect, it } from "@effect/vitest"
import { ConfigError, Effect, Either, Exit, Layer } from "effect"
import { AppConfig } from "../src/Config.ts"
import { normaliseIp, ProxyList } from "../src/Platform/ClientIp.ts"
import { TestServer } from "./support/TestServer.ts"

const proxies = (raw: string): ProxyList =>
  Either.getOrThrowWith(ProxyList.parse(raw, "TRUST_PROXY"), (error) => new Error(String(error)))

describe("normaliseIp", () => {
  it("writes an IPv4-mapped IPv6 address, in any spelling, as the IPv4 address", () => {
    for (const mapped of ["::ffff:10.0.0.1", "::FFFF:10.0.0.1", "::ffff:a00:1", "0:0:0:0:0:ffff:10.0.0.1", "[::ffff:10.0.0.1]"]) {
      expect(normaliseIp(mapped), mapped).toBe("10.0.0.1")
    }
  })

  it("writes IPv6 canonically and drops brackets and zones", () => {
    expect(normaliseIp("2001:DB8:0:0::1")).toBe("2001:db8::1")
    expect(normaliseIp(" [2001:db8::1] ")).toBe("2001:db8::1")
    expect(normaliseIp("fe80::1%eth0")).toBe("fe80::1")
    expect(normaliseIp("::1")).toBe("::1")
    expect(normaliseIp("192.0.2.7")).toBe("192.0.2.7")
  })

  it("leaves anything that is not an address recognisably not one", () => {
    expect(normaliseIp("unknown")).toBe("unknown")
    expect(normaliseIp("")).toBe("")
  })
})

describe("ProxyList.clientIp", () => {
  it("without TRUST_PROXY is always the socket address and ignores X-Forwarded-For", () => {
    const none = proxies("")
    expect(none.size).toBe(0)
    expect(none.clientIp("203.0.113.9", "198.51.100.1")).toBe("203.0.113.9")
    expect(none.clientIp("127.0.0.1", "198.51.100.1, 198.51.100.2")).toBe("127.0.0.1")
    expect(none.clientIp("::ffff:127.0.0.1", ["198.51.100.1"])).toBe("127.0.0.1")
    expect(ProxyList.none.clientIp("10.0.0.1", "1.1.1.1")).toBe("10.0.0.1")
  })

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", () => {
    const list = proxies("10.0.0.1")
    expect(list.clientIp("203.0.113.9", "198.51.100.1")).toBe("203.0.113.9")
  })

  it("believes the entry a trusted proxy appended", () => {
    const list = proxies("10.0.0.1")
    expect(list.clientIp("10.0.0.1", "198.51.100.1")).toBe("198.51.100.1")
    expect(list.clientIp("10.0.0.1", " 198.51.100.1 ")).toBe("198.51.100.1")
    expect(list.clientIp("10.0.0.1", undefined)).toBe("10.0.0.1")
  })

  it("walks right to left through trusted hops and never believes spoofed entries left of an untrusted one", () => {
    const list = proxies("10.0.0.0/8, 192.168.1.1")
    expect(list.clientIp("10.0.0.1", "6.6.6.6, 198.51.100.1, 192.168.1.1, 10.2.3.4")).toBe("198.51.100.1")
    expect(list.clientIp("10.0.0.1", "1.2.3.4, 5.6.7.8, 198.51.100.1")).toBe("198.51.100.1")
    // A client that writes a trusted address itself still sits right of it.
    expect(list.clientIp("10.0.0.1", "10.9.9.9, 198.51.100.1")).toBe("198.51.100.1")
  })

  it("when every hop is trusted, the leftmost one is the client", () => {
    const list = proxies("10.0.0.0/8")
    expect(list.clientIp("10.0.0.1", "10.0.0.7, 10.0.0.3")).toBe("10.0.0.7")
  })

  it("trusts IPv6 addresses and CIDRs", () => {
    const list = proxies("2001:db8::/32, ::1")
    expect(list.clientIp("::1", "2001:db8:ffff::5, 2001:db8::1")).toBe("2001:db8:ffff::5")
    expect(list.clientIp("::1", "2001:db9::5, 2001:db8::1")).toBe("2001:db9::5")
    expect(list.clientIp("2001:db8:1::1", "203.0.113.5")).toBe("203.0.113.5")
    expect(list.clientIp("2001:db9::1", "203.0.113.5")).toBe("2001:db9::1")
    expect(list.clientIp("::1", "2001:DB9:0::5")).toBe("2001:db9::5")
  })

  it("treats ::ffff:10.0.0.1 and 10.0.0.1 as the same address everywhere", () => {
    const plain = proxies("10.0.0.1")
    expect(plain.clientIp("::ffff:10.0.0.1", "198.51.100.1")).toBe("198.51.100.1")
    expect(plain.clientIp("10.0.0.1", "::ffff:198.51.100.1")).toBe("198.51.100.1")
    expect(plain.clientIp("10.0.0.1", "198.51.100.1, ::ffff:10.0.0.1")).toBe("198.51.100.1")
    expect(plain.clientIp("::ffff:203.0.113.9", "198.51.100.1")).toBe("203.0.113.9")
    const mapped = proxies("::ffff:10.0.0.1")
    expect(mapped.clientIp("10.0.0.1", "198.51.100.1")).toBe("198.51.100.1")
    expect(mapped.clientIp("::ffff:10.0.0.1", "198.51.100.1")).toBe("198.51.100.1")
    const mappedCidr = proxies("::ffff:10.0.0.0/104")
    expect(mappedCidr.clientIp("10.200.0.1", "198.51.100.1")).toBe("198.51.100.1")
    expect(mappedCidr.clientIp("11.0.0.1", "198.51.100.1")).toBe("11.0.0.1")
  })

  it("stops at an entry that is not an address and believes nothing to its left", () => {
    const list = proxies("10.0.0.0/8")
    expect(list.clientIp("10.0.0.1", "198.51.100.1, garbage")).toBe("10.0.0.1")
    expect(list.clientIp("10.0.0.1", "198.51.100.1, garbage, 10.0.0.2")).toBe("10.0.0.2")
    expect(list.clientIp("10.0.0.1", "garbage, 198.51.100.1")).toBe("198.51.100.1")
    expect(list.clientIp("10.0.0.1", "198.51.100.1,,10.0.0.2")).toBe("10.0.0.2")
    expect(list.clientIp("10.0.0.1", "")).toBe("10.0.0.1")
    expect(list.clientIp("10.0.0.1", "999.1.1.1")).toBe("10.0.0.1")
    expect(list.clientIp("10.0.0.1", "unknown")).toBe("10.0.0.1")
  })

  it("accepts entries with a port", () => {
    const list = proxies("10.0.0.0/8")
    expect(list.clientIp("10.0.0.1", "198.51.100.1:4711")).toBe("198.51.100.1")
    expect(list.clientIp("10.0.0.1", "[2001:db8::1]:4711")).toBe("2001:db8::1")
  })

  it("reads several X-Forwarded-For headers as one list, in order", () => {
    const list = proxies("10.0.0.0/8")
    expect(list.clientIp("10.0.0.1", ["6.6.6.6", "198.51.100.1, 10.0.0.5"])).toBe("198.51.100.1")
    expect(list.clientIp("10.0.0.1", ["198.51.100.1", "10.0.0.5", "10.0.0.6"])).toBe("198.51.100.1")
    expect(list.clientIp("203.0.113.9", ["198.51.100.1", "10.0.0.5"])).toBe("203.0.113.9")
  })

  it("without a socket address believes nothing", () => {
    const list = proxies("10.0.0.0/8")
    expect(list.clientIp(undefined, "198.51.100.1")).toBe("")
  })
})

describe("TRUST_PROXY", () => {
  it("accepts addresses and CIDRs of both families, with spaces and empty items", () => {
    const list = proxies(" 10.0.0.0/8 , ,192.168.0.1, ::1, 2001:db8::/32, [::2], fe80::1%eth0, 0.0.0.0/0 ")
    expect(list.size).toBe(7)
    expect(list.trusts("10.1.2.3")).toBe(true)
    expect(list.trusts("::2")).toBe(true)
  })

  it("trusts exactly what it lists", () => {
    const list = proxies("192.168.0.0/16, 2001:DB8::/32")
    expect(list.trusts("192.168.255.1")).toBe(true)
    expect(list.trusts("192.169.0.1")).toBe(false)
    expect(list.trusts("2001:db8:1::1")).toBe(true)
    expect(list.trusts("2001:db9::1")).toBe(false)
    expect(list.trusts("garbage")).toBe(false)
  })

  for (const bad of ["10.0.0.0/33", "abc", "1.2.3.4/", "::1/129", "1.2.3.4/8/9", "10.0.0.0/-1", "10.0.0.0/0x8", "10.0.0.0/ 8x", "1.2.3.4.5", "1.2.3.4/32 5"]) {
    it(`refuses ${JSON.stringify(bad)} with a ConfigError naming TRUST_PROXY`, () => {
      const result = ProxyList.parse(`127.0.0.1, ${bad}`, "TRUST_PROXY")
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(ConfigError.isConfigError(result.left)).toBe(true)
        expect(ConfigError.isInvalidData(result.left)).toBe(true)
        expect(String(result.left)).toContain("TRUST_PROXY")
        expect(String(result.left)).toContain(bad.trim())
      }
    })
  }

  it.effect("an invalid TRUST_PROXY fails the configuration", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Effect.provide(AppConfig, AppConfig.layerFromMap({ TRUST_PROXY: "10.0.0.0/33" })))
      expect(ConfigError.isInvalidData(error)).toBe(true)
      if (ConfigError.isInvalidData(error)) {
        expect(error.path).toEqual(["TRUST_PROXY"])
        expect(error.message).toContain("10.0.0.0/33")
      }
      const good = yield* Effect.provide(AppConfig, AppConfig.layerFromMap({ TRUST_PROXY: "10.0.0.0/8" }))
      expect(good.trustProxy.trusts("10.0.0.9")).toBe(true)
    })
  )

  it.effect("the server refuses to start with an invalid TRUST_PROXY", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(TestServer({ TRUST_PROXY: "abc" }))))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(exit)).toContain("TRUST_PROXY")
    })
  )
})
