import { describe, expect, it } from "vitest"
import { HeldBytes, SLAB_BYTES } from "../src/Clicks/HeldBytes.ts"

const bytesOf = (n: number, length: number) => {
  const bytes = new Uint8Array(length)
  for (let i = 0; i < length; i++) bytes[i] = (n * 31 + i) & 0xff
  return bytes
}
/** Whether `bytes` are batch n's (compared as Buffers: element by element, the matcher is slow on large arrays). */
const isBatch = (bytes: Uint8Array | undefined, n: number, length: number) =>
  bytes !== undefined && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).equals(bytesOf(n, length))
const lengthOf = (n: number) => 1 + ((n * 7919) % 20_000)

describe("bytes of handed batches held until the writer reports them", () => {
  it("keep every held batch intact while others are released and their room reused", () => {
    const store = new HeldBytes()
    const held = new Map<number, Uint8Array>()
    let released = 0
    for (let n = 0; n < 2000; n++) {
      held.set(n, store.hold(bytesOf(n, lengthOf(n))))
      // Released in order, some 40 batches later, as the writer's reports settle them.
      if (n >= 40) {
        expect(isBatch(held.get(released), released, lengthOf(released))).toBe(true)
        store.release(held.get(released)!)
        held.delete(released++)
      }
    }
    for (const [n, bytes] of held) expect(isBatch(bytes, n, lengthOf(n))).toBe(true)
    // 40 batches of at most 20 KB fill at most four slabs, with one being filled: reused, not new ones.
    expect(store.slabCount).toBeLessThanOrEqual(6)
  })

  it("copy what it holds: the caller's array may be reused at once", () => {
    const store = new HeldBytes()
    const source = bytesOf(1, 100)
    const held = store.hold(source)
    source.fill(0)
    expect(isBatch(held, 1, 100)).toBe(true)
    expect(held.buffer).not.toBe(source.buffer)
  })

  it("hold a batch larger than a slab as it is, and give back slabs beyond those kept for reuse", () => {
    const store = new HeldBytes()
    const large = bytesOf(2, SLAB_BYTES + 1)
    expect(store.hold(large)).toBe(large)
    // A burst: 40 slabs' worth held at once, then all released.
    const burst = Array.from({ length: 40 }, (_, n) => store.hold(bytesOf(n, SLAB_BYTES)))
    expect(store.slabCount).toBe(40)
    for (const bytes of burst) store.release(bytes)
    expect(store.slabCount).toBeLessThanOrEqual(17)
  })
})
