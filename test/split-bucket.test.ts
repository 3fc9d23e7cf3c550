import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { createHash } from "node:crypto"
import { splitBucket } from "../src/SmartLinks/SmartRoute.ts"

/** The bucket as the service has always placed visitors: the first 8 hex digits of the SHA-256, modulo 100. */
const bucketByHex = (key: string, linkId: number, ip: string, userAgent: string) =>
  parseInt(createHash("sha256").update(`${key}\n${linkId}\n${ip}\n${userAgent}`).digest("hex").slice(0, 8), 16) % 100

describe("split buckets", () => {
  it("are the first 32 bits of the keyed SHA-256 modulo 100, so every visitor keeps the bucket placed before", () => {
    fc.assert(
      fc.property(fc.string(), fc.nat(), fc.ipV4(), fc.option(fc.string({ unit: "grapheme" }), { nil: undefined }), (key, linkId, ip, userAgent) => {
        const headers = userAgent === undefined ? {} : { "user-agent": userAgent }
        expect(splitBucket(key, linkId, { headers, ip, query: "" })).toBe(bucketByHex(key, linkId, ip, userAgent ?? ""))
      }),
      { numRuns: 2000 }
    )
  })

  it("spread visitors over all 100 buckets, and another key places them elsewhere", () => {
    const visits = Array.from({ length: 5000 }, (_, i) => ({ headers: { "user-agent": `agent ${i % 7}` }, ip: `10.0.${i >> 8}.${i & 255}`, query: "" }))
    const counts = new Array<number>(100).fill(0)
    for (const visit of visits) counts[splitBucket("one key", 3, visit)]! += 1
    expect(Math.min(...counts)).toBeGreaterThan(20)
    expect(Math.max(...counts)).toBeLessThan(90)
    const moved = visits.filter((visit) => splitBucket("one key", 3, visit) !== splitBucket("another key", 3, visit)).length
    expect(moved).toBeGreaterThan(4500)
  })
})
