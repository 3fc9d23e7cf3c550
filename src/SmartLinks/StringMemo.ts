import { boundedMemo } from "../Clicks/ClickSource.ts"

const SLOTS = 1024

/** A cheap hash of every third character and the length: where in the front table an agent sits. */
const sampledHash = (text: string) => {
  let hash = text.length
  for (let i = 0; i < text.length; i += 3) hash = Math.imul(hash ^ text.charCodeAt(i), 0x9e3779b1)
  return (hash ^ (hash >>> 15)) & (SLOTS - 1)
}

/**
 * A memo of `compute` for what a request's headers bring (user agents, languages, addresses), bounded
 * like `boundedMemo` (which backs it), with a direct-mapped table of the last key seen at each of
 * 1,024 places in front. Every request brings its headers as new strings, whose full hash a Map
 * computes every time (about 0.2 µs for a browser's 110-character agent); the front table reads a
 * third of the characters and compares the rest. Keys that share a place take turns in it and are
 * answered by the Map, as without it.
 */
export const stringMemo = <A>(limit: number, compute: (key: string) => A): ((key: string) => A) => {
  const backing = boundedMemo(limit, compute)
  const keys = new Array<string | null>(SLOTS).fill(null)
  const values = new Array<A | null>(SLOTS).fill(null)
  return (key) => {
    const slot = sampledHash(key)
    const value = values[slot]
    if (keys[slot] === key && value !== null) return value
    const computed = backing(key)
    keys[slot] = key
    values[slot] = computed
    return computed
  }
}
