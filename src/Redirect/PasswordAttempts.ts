import { PASS_SECONDS } from "./PasswordCookie.ts"

/**
 * Password tries per sliding window: per client network on all links, and per link from all networks
 * (the ceiling a guesser with many networks meets). A network that gave a link's right answer is
 * `proven` for it as long as a pass lasts, and is held by its own budget only.
 */
export interface AttemptLimits {
  readonly perNetwork: number
  readonly perLink: number
  readonly windowMs: number
  readonly provenMs: number
}

export const ATTEMPT_LIMITS: AttemptLimits = { perNetwork: 5, perLink: 30, windowMs: 60_000, provenMs: PASS_SECONDS * 1000 }

/** A try let through (`ticket` names it in the link's window), or refused: whose budget is spent, and the seconds until a try leaves it. */
export type Attempt =
  | { readonly _tag: "Allowed"; readonly ticket: string }
  | { readonly _tag: "Refused"; readonly by: "network" | "link"; readonly waitSeconds: number }

export const waitSeconds = (oldest: number, windowMs: number, now: number) => Math.max(1, Math.ceil((oldest + windowMs - now) / 1000))

const MAX_TRACKED = 100_000
/** How the tickets of tries counted in process begin. */
export const LOCAL_TICKET = "local-"

interface Try {
  readonly at: number
  readonly ticket: string
}

/** Entries of `map`, the oldest first, at most MAX_TRACKED: each use moves its key to the end. */
const bounded = <K, V>(map: Map<K, V>, key: K, value: V) => {
  map.delete(key)
  if (map.size >= MAX_TRACKED) map.delete(map.keys().next().value!)
  map.set(key, value)
}

/** The tries of this instance: what decides without Redis, and while Redis does not answer. */
export const attemptsInProcess = (limits: AttemptLimits = ATTEMPT_LIMITS) => {
  const networks = new Map<string, Array<Try>>()
  const links = new Map<number, Array<Try>>()
  const proven = new Map<string, number>()
  let issued = 0
  const recent = <K>(windows: Map<K, Array<Try>>, key: K, now: number) => {
    const tries = (windows.get(key) ?? []).filter((entry) => now - entry.at < limits.windowMs)
    bounded(windows, key, tries)
    return tries
  }
  const provenKey = (linkId: number, network: string) => `${linkId} ${network}`

  return {
    /** Counts a try on `linkId` from `network` in both windows (only the network's when it is proven), or refuses it, counting nothing. */
    attempt: (linkId: number, network: string, now: number): Attempt => {
      const byNetwork = recent(networks, network, now)
      if (byNetwork.length >= limits.perNetwork) return { _tag: "Refused", by: "network", waitSeconds: waitSeconds(byNetwork[0]!.at, limits.windowMs, now) }
      const entry = { at: now, ticket: `${LOCAL_TICKET}${++issued}` }
      if (now - (proven.get(provenKey(linkId, network)) ?? -Infinity) >= limits.provenMs) {
        const byLink = recent(links, linkId, now)
        if (byLink.length >= limits.perLink) return { _tag: "Refused", by: "link", waitSeconds: waitSeconds(byLink[0]!.at, limits.windowMs, now) }
        byLink.push(entry)
      }
      byNetwork.push(entry)
      return { _tag: "Allowed", ticket: entry.ticket }
    },
    /** A right answer: its try leaves the link's window, and `network` is proven for the link. */
    proven: (linkId: number, network: string, ticket: string, now: number): void => {
      const byLink = links.get(linkId) ?? []
      const at = byLink.findIndex((entry) => entry.ticket === ticket)
      if (at >= 0) byLink.splice(at, 1)
      bounded(proven, provenKey(linkId, network), now)
    }
  }
}

export type AttemptsInProcess = ReturnType<typeof attemptsInProcess>
