import { describe, expect, it } from "@effect/vitest"
import { halfSipHash32, halfSipHash64, halfSipKey } from "../src/SmartLinks/HalfSipHash.ts"

// The reference implementation's vectors (vectors.h of github.com/veorq/SipHash): key 00..07, the
// message of length n is 00..n-1, the output's bytes as the reference writes them.
const VECTORS_32: ReadonlyArray<readonly [number, string]> = [
  [0, "a9359f5b"],
  [1, "27475ab8"],
  [2, "fa62a603"],
  [3, "8afee704"],
  [4, "2a6e4689"],
  [5, "c5fab669"],
  [7, "8bcf63c5"],
  [8, "d0b8848f"],
  [15, "74fe2b97"],
  [63, "59ea4a74"]
]
const VECTORS_64: ReadonlyArray<readonly [number, string]> = [
  [0, "218d1f59b9b83cc8"],
  [1, "be552412f8387315"],
  [2, "064f39ef7c50eb57"],
  [3, "ce0f1a45f7060679"],
  [6, "ce3e91358aa2bc25"]
]

const key = halfSipKey(Uint8Array.from({ length: 8 }, (_, i) => i))
const message = Uint8Array.from({ length: 64 }, (_, i) => i)
const bytesOf = (...words: ReadonlyArray<number>) => Buffer.from(Uint32Array.from(words).buffer).toString("hex")

describe("HalfSipHash-2-4", () => {
  it("gives the reference's 32-bit outputs", () => {
    for (const [length, expected] of VECTORS_32) expect(bytesOf(halfSipHash32(key, message, length)), `length ${length}`).toBe(expected)
  })

  it("gives the reference's 64-bit outputs", () => {
    for (const [length, expected] of VECTORS_64) expect(bytesOf(...halfSipHash64(key, message, length)), `length ${length}`).toBe(expected)
  })

  it("reads the whole array when no length is given, and refuses a key that is not 8 bytes", () => {
    expect(halfSipHash32(key, message.slice(0, 15))).toBe(halfSipHash32(key, message, 15))
    expect(() => halfSipKey(new Uint8Array(16))).toThrow(RangeError)
  })
})
