import { boundedMemo } from "../Clicks/ClickSource.ts"

const SLOTS = 1024

/** A cheap hash of every third character and the length: where in the front table an agent sits. */
const sampledHash = (text: string) => {
  let hash = text.length
  for (let i = 0; i < text.length; i += 3) hash = Math.imul(hash ^ text.charCodeAt(i), 0x9e3779b1)
  return (hash ^ (hash >>> 15)) & (SLOTS - 1)
}

/**
 * A memo of `compute` for user agents, bounded like `boundedMemo` (which backs it), with a
 * direct-mapped table of the last agent seen at each of 1,024 places in front. Every visit brings its
 * agent as a new string, whose full hash a Map computes every time (about 0.2 µs for a phone's or a
 * browser's 110 characters); the front table reads a third of them and compares the rest. Agents
 * that share a place take turns in it and are answered by the Map, as without it.
 */
export const agentMemo = <A>(limit: number, compute: (agent: string) => A): ((agent: string) => A) => {
  const backing = boundedMemo(limit, compute)
  const agents = new Array<string | null>(SLOTS).fill(null)
  const values = new Array<A | null>(SLOTS).fill(null)
  return (agent) => {
    const slot = sampledHash(agent)
    const value = values[slot]
    if (agents[slot] === agent && value !== null) return value
    const computed = backing(agent)
    agents[slot] = agent
    values[slot] = computed
    return computed
  }
}
