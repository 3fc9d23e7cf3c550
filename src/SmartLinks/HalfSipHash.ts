/**
 * HalfSipHash-2-4 (Aumasson and Bernstein; the reference `halfsiphash.c`): a keyed pseudorandom
 * function of a 64-bit key, made for short inputs, in 32-bit integer operations. Checked against the
 * reference test vectors. Outputs are little-endian words, as the reference writes its bytes.
 */

export interface HalfSipKey {
  readonly k0: number
  readonly k1: number
}

/** The key from its 8 bytes, as the reference reads them (little-endian words). */
export const halfSipKey = (bytes: Uint8Array): HalfSipKey => {
  if (bytes.length !== 8) throw new RangeError("a HalfSipHash key is 8 bytes")
  return {
    k0: (bytes[0]! | (bytes[1]! << 8) | (bytes[2]! << 16) | (bytes[3]! << 24)) >>> 0,
    k1: (bytes[4]! | (bytes[5]! << 8) | (bytes[6]! << 16) | (bytes[7]! << 24)) >>> 0
  }
}

// The state between rounds: four 32-bit words, kept here so that no call allocates.
const v = new Int32Array(4)

const rounds = (count: number) => {
  let v0 = v[0]!
  let v1 = v[1]!
  let v2 = v[2]!
  let v3 = v[3]!
  for (let i = 0; i < count; i++) {
    v0 = (v0 + v1) | 0
    v1 = (v1 << 5) | (v1 >>> 27)
    v1 ^= v0
    v0 = (v0 << 16) | (v0 >>> 16)
    v2 = (v2 + v3) | 0
    v3 = (v3 << 8) | (v3 >>> 24)
    v3 ^= v2
    v0 = (v0 + v3) | 0
    v3 = (v3 << 7) | (v3 >>> 25)
    v3 ^= v0
    v2 = (v2 + v1) | 0
    v1 = (v1 << 13) | (v1 >>> 19)
    v1 ^= v2
    v2 = (v2 << 16) | (v2 >>> 16)
  }
  v[0] = v0
  v[1] = v1
  v[2] = v2
  v[3] = v3
}

const absorb = (key: HalfSipKey, bytes: Uint8Array, length: number, wide: boolean) => {
  v[0] = key.k0
  v[1] = wide ? key.k1 ^ 0xee : key.k1
  v[2] = 0x6c796765 ^ key.k0
  v[3] = 0x74656462 ^ key.k1
  const end = length - (length & 3)
  for (let i = 0; i < end; i += 4) {
    const m = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24)
    v[3] ^= m
    rounds(2)
    v[0] ^= m
  }
  let b = length << 24
  for (let i = end; i < length; i++) b |= bytes[i]! << (8 * (i - end))
  v[3] ^= b
  rounds(2)
  v[0] ^= b
  v[2] ^= wide ? 0xee : 0xff
  rounds(4)
}

/** The 32-bit HalfSipHash-2-4 of the first `length` bytes, as an unsigned integer. */
export const halfSipHash32 = (key: HalfSipKey, bytes: Uint8Array, length = bytes.length): number => {
  absorb(key, bytes, length, false)
  return (v[1]! ^ v[3]!) >>> 0
}

/** The 64-bit HalfSipHash-2-4 of the first `length` bytes, as its two words (low first), unsigned. */
export const halfSipHash64 = (key: HalfSipKey, bytes: Uint8Array, length = bytes.length): readonly [number, number] => {
  absorb(key, bytes, length, true)
  const low = (v[1]! ^ v[3]!) >>> 0
  v[1] ^= 0xdd
  rounds(4)
  return [low, (v[1]! ^ v[3]!) >>> 0]
}
