import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { stringMemo } from "../src/Clicks/ClickSource.ts"
import { splitBucket, type Visit } from "../src/SmartLinks/SmartRoute.ts"

const visitOf = (ip: string, userAgent: string | undefined): Visit => ({
  headers: userAgent === undefined ? {} : { "user-agent": userAgent },
  ip,
  query: ""
})
// A string with the same characters that is not the same object, as each request's header is.
const copy = (text: string) => Buffer.from(text, "utf16le").toString("utf16le")

const visits = Array.from({ length: 5000 }, (_, i) => visitOf(`10.0.${i >> 8}.${i & 255}`, `agent ${i % 7}`))
const movedBy = (change: (visit: Visit) => number) => visits.filter((visit) => splitBucket("one key", 3, visit) !== change(visit)).length

describe("split buckets", () => {
  it("are the same for a repeated visitor, whatever its agent (long, non-Latin, missing) and address", () => {
    fc.assert(
      fc.property(fc.string(), fc.nat(), fc.oneof(fc.ipV4(), fc.ipV6()), fc.option(fc.string({ unit: "grapheme", maxLength: 700 }), { nil: undefined }), (key, linkId, ip, userAgent) => {
        const bucket = splitBucket(key, linkId, visitOf(ip, userAgent))
        expect(bucket).toBeGreaterThanOrEqual(0)
        expect(bucket).toBeLessThan(100)
        expect(Number.isInteger(bucket)).toBe(true)
        expect(splitBucket(copy(key), linkId, visitOf(copy(ip), userAgent === undefined ? undefined : copy(userAgent)))).toBe(bucket)
      }),
      { numRuns: 2000 }
    )
  })

  it("spread visitors over all 100 buckets", () => {
    const counts = new Array<number>(100).fill(0)
    for (const visit of visits) counts[splitBucket("one key", 3, visit)]! += 1
    expect(Math.min(...counts)).toBeGreaterThan(20)
    expect(Math.max(...counts)).toBeLessThan(90)
  })

  it("move most visitors under another key, on another link, from another address or with another agent", () => {
    expect(movedBy((visit) => splitBucket("another key", 3, visit))).toBeGreaterThan(4800)
    expect(movedBy((visit) => splitBucket("one key", 4, visit))).toBeGreaterThan(4800)
    expect(movedBy((visit) => splitBucket("one key", 3 + 2 ** 32, visit))).toBeGreaterThan(4800)
    expect(movedBy((visit) => splitBucket("one key", 3, { ...visit, ip: `${visit.ip}1` }))).toBeGreaterThan(4800)
    expect(movedBy((visit) => splitBucket("one key", 3, visitOf(visit.ip, `${visit.headers["user-agent"]}.`)))).toBeGreaterThan(4800)
  })
})

describe("the string memo", () => {
  it("answers each agent with its own value, agents sharing a place in the front table included", () => {
    const computed: Array<string> = []
    const memo = stringMemo(100, (agent) => {
      computed.push(agent)
      return { agent }
    })
    // Every third character is read for the place: these differ at the second only.
    const first = "axc browser"
    const second = "ayc browser"
    for (let round = 0; round < 3; round++) {
      expect(memo(copy(first)).agent).toBe(first)
      expect(memo(copy(second)).agent).toBe(second)
    }
    expect(memo(copy("")).agent).toBe("")
    expect(computed).toEqual([first, second, ""])
  })

  it("holds at most `limit` keys in its Map and 1,024 in front of it", () => {
    let computed = 0
    const memo = stringMemo(100, (key) => {
      computed += 1
      return key.length
    })
    const keys = Array.from({ length: 5000 }, (_, i) => `agent ${i}`)
    for (const key of keys) memo(key)
    expect(computed).toBe(5000)
    for (const key of keys) memo(copy(key))
    expect(computed).toBeGreaterThanOrEqual(10_000 - 100 - 1024)
  })
})
