import { BlockList } from "node:net"
import * as crypto from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"
import { classifyUserAgent, platformOf, stringMemo, truncateUserAgent } from "../Clicks/ClickSource.ts"
import type { GeoLocation } from "../Clicks/GeoIp.ts"
import { parseSubnet } from "../Platform/ClientIp.ts"
import { type HalfSipKey, halfSipHash32, halfSipHash64, halfSipKey } from "./HalfSipHash.ts"
import {
  BROWSERS,
  type Conditions,
  destinationsOf,
  DEVICES,
  OPERATING_SYSTEMS,
  type Split,
  type StoredSettings,
  type Target
} from "./SettingsModel.ts"

/**
 * A link's rules and split compiled for the redirect path (plain functions, no Effect): evaluated
 * per visit, first matching rule wins, then the split, else the link's own URL (`undefined`). The
 * user agent is parsed and the address placed only when a rule needs them, each at most once a visit.
 */

/** What a visit offers the conditions: headers, the client address (trusted-proxy rules applied), the query. */
export interface Visit {
  readonly headers: IncomingHttpHeaders
  readonly ip: string
  readonly query: string
}

/** Where an address is, as the conditions compare it (see `placeLookup`). */
export type GeoLookup = (ip: string) => Place

export interface SmartRoute<T extends Target = Target> {
  /** Where this visit goes: a rule's or the split's destination, or undefined for the link's URL. */
  readonly choose: (visit: Visit) => T | undefined
  /** What the cache counts the compiled settings as, in bytes. */
  readonly weight: number
}

/**
 * A visitor's agent as one bit per trait: its device class, its operating system and its browser,
 * each its own bit, or the "unknown" bit of its kind. A rule's agent conditions are the bits they
 * allow (every bit of a kind they do not name), and hold when the visitor has no other bit: one
 * AND a visit, where sets of names cost a hash lookup each.
 */
const bitsOf = (names: ReadonlyArray<string>, first: number): ReadonlyMap<string, number> => new Map(names.map((name, i) => [name, 1 << (first + i)]))

const DEVICE_BITS = bitsOf(DEVICES, 0)
const UNKNOWN_DEVICE = 1 << DEVICES.length
const OS_FIRST = DEVICES.length + 1
const OS_BITS = bitsOf(OPERATING_SYSTEMS, OS_FIRST)
const UNKNOWN_OS = 1 << (OS_FIRST + OPERATING_SYSTEMS.length)
const BROWSER_FIRST = OS_FIRST + OPERATING_SYSTEMS.length + 1
const BROWSER_BITS = bitsOf(BROWSERS, BROWSER_FIRST)
const UNKNOWN_BROWSER = 1 << (BROWSER_FIRST + BROWSERS.length)

const allOf = (bits: ReadonlyMap<string, number>, unknown: number) => [...bits.values()].reduce((all, bit) => all | bit, unknown)
const ALL_DEVICES = allOf(DEVICE_BITS, UNKNOWN_DEVICE)
const ALL_OS = allOf(OS_BITS, UNKNOWN_OS)
const ALL_BROWSERS = allOf(BROWSER_BITS, UNKNOWN_BROWSER)
/** What a rule without agent conditions allows. */
const ANY_AGENT = ALL_DEVICES | ALL_OS | ALL_BROWSERS

// What the conditions call Bowser's names.
const OS_NAMES: ReadonlyMap<string, string> = new Map([
  ["iOS", "ios"],
  ["Android", "android"],
  ["Windows", "windows"],
  ["macOS", "macos"],
  ["Linux", "linux"]
])

const BROWSER_NAMES: ReadonlyMap<string, string> = new Map([
  ["Chrome", "chrome"],
  ["Chromium", "chrome"],
  ["Safari", "safari"],
  ["Firefox", "firefox"],
  ["Microsoft Edge", "edge"],
  ["Opera", "opera"],
  ["Samsung Internet for Android", "samsung"]
])

const bitOf = (bits: ReadonlyMap<string, number>, name: string | undefined, unknown: number) => (name === undefined ? undefined : bits.get(name)) ?? unknown

// A user agent takes tens of microseconds to parse, and the same few make most visits.
const traitsOf = stringMemo(10_000, (userAgent): number => {
  const { os, browser } = platformOf(userAgent)
  return (
    bitOf(DEVICE_BITS, classifyUserAgent(userAgent).device, UNKNOWN_DEVICE) |
    bitOf(OS_BITS, OS_NAMES.get(os), UNKNOWN_OS) |
    bitOf(BROWSER_BITS, BROWSER_NAMES.get(browser), UNKNOWN_BROWSER)
  )
})

/** The bits a rule's agent conditions allow: a kind it does not name allows all of its bits. */
const allowedAgents = (when: Conditions) => {
  const allowed = (names: ReadonlyArray<string> | undefined, bits: ReadonlyMap<string, number>, all: number) =>
    names === undefined ? all : names.reduce((mask, name) => mask | (bits.get(name.toLowerCase()) ?? 0), 0)
  return allowed(when.device, DEVICE_BITS, ALL_DEVICES) | allowed(when.os, OS_BITS, ALL_OS) | allowed(when.browser, BROWSER_BITS, ALL_BROWSERS)
}

/** Longer Accept-Language headers are read this far: real ones are far shorter. */
const MAX_ACCEPT_LANGUAGE = 1000

/**
 * The visitor's preferred language: the `Accept-Language` entry of the highest q (the first among
 * equals), `*` and q=0 left out; lower case, "" when none.
 */
export const preferredLanguage = (header: string | undefined): string => {
  if (header === undefined) return ""
  let best = ""
  let bestQ = 0
  for (const part of header.slice(0, MAX_ACCEPT_LANGUAGE).split(",")) {
    const [tag = "", ...parameters] = part.split(";")
    const language = tag.trim().toLowerCase()
    if (language === "" || language === "*") continue
    let q = 1
    for (const parameter of parameters) {
      const [name, value] = parameter.split("=")
      if (name?.trim().toLowerCase() === "q") q = Number(value?.trim())
    }
    if (Number.isFinite(q) && q > bestQ) {
      best = language
      bestQ = q
    }
  }
  return best
}

// The same few headers make most visits.
const languageOf = stringMemo(1000, preferredLanguage)

/** A GeoIP place with its region and city in lower case, as the conditions hold them. */
export interface Place {
  readonly country: string | null
  readonly region: string | null
  readonly city: string | null
}

const NOWHERE: Place = { country: null, region: null, city: null }

const placeOf = (location: GeoLocation): Place =>
  location.region === null && location.city === null
    ? location
    : { country: location.country, region: location.region?.toLowerCase() ?? null, city: location.city?.toLowerCase() ?? null }

/** A GeoIP lookup for the conditions, memoised: addresses repeat within seconds, a lookup costs a few microseconds. */
export const placeLookup = (lookup: (ip: string) => GeoLocation): GeoLookup => stringMemo(10_000, (ip) => placeOf(lookup(ip)))

/** What one visit's conditions have asked so far: each fact is found once, when first needed. */
class Facts {
  private agent = 0
  private place: Place | undefined
  private params: URLSearchParams | undefined
  private language: string | undefined
  private seconds: number | undefined
  constructor(
    readonly visit: Visit,
    private readonly geo: GeoLookup | undefined
  ) {}
  /** The agent's trait bits. */
  get traits(): number {
    // Cut first: the memo's keys stay small whatever a client sends.
    if (this.agent === 0) this.agent = traitsOf(truncateUserAgent(this.visit.headers["user-agent"]))
    return this.agent
  }
  get location(): Place {
    this.place ??= this.geo === undefined ? NOWHERE : this.geo(this.visit.ip)
    return this.place
  }
  get query(): URLSearchParams {
    this.params ??= new URLSearchParams(this.visit.query)
    return this.params
  }
  /** Unix seconds, read when a rule on time first asks. */
  get now(): number {
    this.seconds ??= Date.now() / 1000
    return this.seconds
  }
  get preferredLanguage(): string {
    this.language ??= languageOf((this.visit.headers["accept-language"] ?? "").slice(0, MAX_ACCEPT_LANGUAGE))
    return this.language
  }
}

/**
 * One rule's conditions as data, read by `passes`: every link's rules have this one shape and one
 * evaluator, so the redirect path runs the same code for a thousand links' rules (closures made per
 * link cost it 2-4 µs a visit over 1,000 links, against 0.7 over one). A condition the rule does not
 * have is null (or, for time and agents, allows everything).
 */
class RuleTest {
  constructor(
    /** Unix seconds: holds from `after` (inclusive) to `before` (exclusive). */
    readonly after: number,
    readonly before: number,
    readonly query: ReadonlyArray<readonly [string, string | true]> | null,
    readonly subnets: BlockList | null,
    /** Language tags, lower case. */
    readonly languages: ReadonlyArray<string> | null,
    /** The agent trait bits allowed (ANY_AGENT: no agent condition). */
    readonly agents: number,
    /** Upper case, as GeoIP has them: compared as they are, with no string made per visit. */
    readonly countries: ReadonlySet<string> | null,
    /** Lower case. */
    readonly regions: ReadonlySet<string> | null,
    readonly cities: ReadonlySet<string> | null
  ) {}
}

const subnetsOf = (values: ReadonlyArray<string>) => {
  const list = new BlockList()
  for (const value of values) {
    const subnet = parseSubnet(value)
    if (subnet !== undefined) list.addSubnet(subnet.ip, subnet.bits, subnet.family)
  }
  return list
}

const inList = (list: BlockList, ip: string) => {
  try {
    return list.check(ip, ip.includes(":") ? "ipv6" : "ipv4")
  } catch {
    return false
  }
}

const queryHolds = (expected: ReadonlyArray<readonly [string, string | true]>, query: URLSearchParams) => {
  for (const [name, value] of expected) {
    if (value === true ? !query.has(name) : !query.getAll(name).includes(value)) return false
  }
  return true
}

const languageHolds = (tags: ReadonlyArray<string>, preferred: string) => {
  if (preferred === "") return false
  // `en` matches `en-GB`: the tag, then "-" (45), with no string made per visit.
  for (const tag of tags) if (preferred === tag || (preferred.charCodeAt(tag.length) === 45 && preferred.startsWith(tag))) return true
  return false
}

const inSet = (values: ReadonlySet<string> | null, value: string | null) => values === null || (value !== null && values.has(value))

/** Whether every condition of the rule holds, the cheapest asked first. */
const passes = (rule: RuleTest, facts: Facts): boolean => {
  if (rule.after !== -Infinity || rule.before !== Infinity) {
    const now = facts.now
    if (now < rule.after || now >= rule.before) return false
  }
  if (rule.query !== null && !queryHolds(rule.query, facts.query)) return false
  if (rule.subnets !== null && !inList(rule.subnets, facts.visit.ip)) return false
  if (rule.languages !== null && !languageHolds(rule.languages, facts.preferredLanguage)) return false
  if (rule.agents !== ANY_AGENT && (facts.traits & ~rule.agents) !== 0) return false
  if (rule.countries !== null || rule.regions !== null || rule.cities !== null) {
    const place = facts.location
    return inSet(rule.countries, place.country) && inSet(rule.regions, place.region) && inSet(rule.cities, place.city)
  }
  return true
}

const setOf = (values: ReadonlyArray<string> | undefined, normal: (value: string) => string) =>
  values === undefined ? null : new Set(values.map(normal))

const testOf = (when: Conditions): RuleTest =>
  new RuleTest(
    when.after ?? -Infinity,
    when.before ?? Infinity,
    when.query === undefined ? null : Object.entries(when.query),
    when.cidr === undefined ? null : subnetsOf(when.cidr),
    when.language?.map((value) => value.toLowerCase()) ?? null,
    allowedAgents(when),
    setOf(when.country, (value) => value.toUpperCase()),
    setOf(when.region, (value) => value.toLowerCase()),
    setOf(when.city, (value) => value.toLowerCase())
  )

const needsPlace = (when: Conditions) => when.country !== undefined || when.region !== undefined || when.city !== undefined

/** Whether any rule of the settings reads the visitor's place (the GeoIP lookup must be loaded first). */
export const settingsNeedGeo = (settings: StoredSettings) => (settings.rules ?? []).some((rule) => needsPlace(rule.when))

/** Addresses are at most 45 characters (IPv6 with IPv4 tail); a longer one is read this far. */
const MAX_ADDRESS = 64

/**
 * Visitors' buckets 0-99 under one secret: HalfSipHash-2-4 (a keyed PRF; without the key nobody can
 * tell or choose a visitor's bucket) of the link id, a keyed 64-bit digest of the user agent and the
 * client address, modulo 100; the same every visit and on every instance with the same secret. The
 * agent's digest is memoised, since the same few agents make most visits: a visit hashes 16 bytes
 * and its address, where a SHA-256 of the whole line cost the redirect thread 1.2 µs under load.
 */
class VisitorBuckets {
  private readonly key: HalfSipKey
  private readonly message = new Uint8Array(16 + MAX_ADDRESS)
  private readonly agentDigest: (userAgent: string) => readonly [number, number]
  constructor(secret: string) {
    const key = halfSipKey(crypto.createHash("sha256").update(secret).digest().subarray(0, 8))
    this.key = key
    this.agentDigest = stringMemo(10_000, (userAgent) => halfSipHash64(key, Buffer.from(userAgent, "utf8")))
  }

  of(linkId: number, visit: Visit): number {
    const message = this.message
    const [agentLow, agentHigh] = this.agentDigest(truncateUserAgent(visit.headers["user-agent"]))
    writeWord(message, 0, linkId >>> 0)
    writeWord(message, 4, Math.floor(linkId / 0x100000000) >>> 0)
    writeWord(message, 8, agentLow)
    writeWord(message, 12, agentHigh)
    const ip = visit.ip
    const length = Math.min(ip.length, MAX_ADDRESS)
    // Addresses are ASCII: a character is its byte.
    for (let i = 0; i < length; i++) message[16 + i] = ip.charCodeAt(i) & 0xff
    return halfSipHash32(this.key, message, 16 + length) % 100
  }
}

const writeWord = (bytes: Uint8Array, at: number, word: number) => {
  bytes[at] = word & 0xff
  bytes[at + 1] = (word >>> 8) & 0xff
  bytes[at + 2] = (word >>> 16) & 0xff
  bytes[at + 3] = word >>> 24
}

// One per secret: a process has one (from its data key), tests a few.
const bucketsBySecret = new Map<string, VisitorBuckets>()
const bucketsFor = (secret: string) => {
  let buckets = bucketsBySecret.get(secret)
  if (buckets === undefined) {
    buckets = new VisitorBuckets(secret)
    bucketsBySecret.set(secret, buckets)
  }
  return buckets
}

/** The bucket 0-99 of a visitor of a link under `secret` (see VisitorBuckets). */
export const splitBucket = (secret: string, linkId: number, visit: Visit): number => bucketsFor(secret).of(linkId, visit)

/** A split as data: entry i takes the buckets from the sum of the weights before it up to `ends[i]`. */
interface SplitPick<T> {
  readonly ends: ReadonlyArray<number>
  readonly targets: ReadonlyArray<T>
}

const splitPick = <T>(split: Split, targets: ReadonlyArray<T>): SplitPick<T> => {
  const weights = split.map((entry) => entry.weight)
  const ends = sharedEnds(JSON.stringify(weights), () => {
    let sum = 0
    return weights.map((weight) => (sum += weight))
  })
  return { ends, targets }
}

const picked = <T>({ ends, targets }: SplitPick<T>, bucket: number): T => {
  for (let i = 0; i < ends.length; i++) if (bucket < ends[i]!) return targets[i]!
  return targets[targets.length - 1]!
}

/** What a rule leads to: its URL or its split (one shape for every rule). */
interface Outcome<T> {
  readonly target: T | undefined
  readonly split: SplitPick<T> | undefined
}

/**
 * A memo whose keys are JSON texts, forgotten all at once when its keys would pass `maxChars` (what it
 * holds grows with them): sharing is lost, nothing else, and links that hold a value keep it.
 */
const sharedBy = <A>(maxChars: number) => {
  const known = new Map<string, A>()
  let chars = 0
  return (key: string, make: () => A): A => {
    let value = known.get(key)
    if (value === undefined) {
      if (chars + key.length > maxChars) {
        known.clear()
        chars = 0
      }
      value = make()
      known.set(key, value)
      chars += key.length
    }
    return value
  }
}

// Links made from one template have the same conditions: compiled once, their objects are the same
// for all of those links and stay in the processor's caches, where a thousand links' own copies
// missed it (rules of 10 conditions over 1,000 links: 3.3 µs a visit on the redirect thread). Bounded
// by the JSON's size, since a settings body may reach 64 KiB: 8 Mi characters of conditions.
const sharedConditions = sharedBy<ReadonlyArray<RuleTest>>(8 * 1024 * 1024)
const sharedEnds = sharedBy<ReadonlyArray<number>>(64 * 1024)
const NO_CONDITIONS: ReadonlyArray<RuleTest> = []

const conditionsOf = (rules: ReadonlyArray<{ readonly when: Conditions }>) =>
  rules.length === 0 ? NO_CONDITIONS : sharedConditions(JSON.stringify(rules.map((rule) => rule.when)), () => rules.map((rule) => testOf(rule.when)))

/**
 * A link's compiled route: a class, so that every link's `choose` is one method of one shape and the
 * redirect path's call to it stays monomorphic whatever the number of links. Rule i's conditions are
 * `conditions[i]` (shared with every link that has the same), its outcome `outcomes[i]` (the link's own).
 */
class CompiledRoute<T extends Target> implements SmartRoute<T> {
  constructor(
    private readonly conditions: ReadonlyArray<RuleTest>,
    private readonly outcomes: ReadonlyArray<Outcome<T>>,
    private readonly fallback: SplitPick<T> | undefined,
    private readonly linkId: number,
    private readonly buckets: VisitorBuckets,
    private readonly geo: GeoLookup | undefined,
    readonly weight: number
  ) {}

  choose(visit: Visit): T | undefined {
    const conditions = this.conditions
    if (conditions.length > 0) {
      const facts = new Facts(visit, this.geo)
      for (let i = 0; i < conditions.length; i++) {
        if (passes(conditions[i]!, facts)) {
          const { target, split } = this.outcomes[i]!
          return target ?? (split === undefined ? undefined : this.pick(split, visit))
        }
      }
    }
    return this.fallback === undefined ? undefined : this.pick(this.fallback, visit)
  }

  private pick(split: SplitPick<T>, visit: Visit) {
    return picked(split, this.buckets.of(this.linkId, visit))
  }
}

/**
 * The settings compiled against their stored targets (in `destinationsOf` order), or undefined
 * when they hold neither rules nor a split, or do not pair with their targets.
 */
export const compileRoute = <T extends Target>(
  settings: StoredSettings,
  targets: ReadonlyArray<T>,
  options: { readonly linkId: number; readonly splitKey: string; readonly geo: GeoLookup | undefined; readonly weight: number }
): SmartRoute<T> | undefined => {
  const rules = settings.rules ?? []
  if ((rules.length === 0 && settings.split === undefined) || destinationsOf(settings).length !== targets.length) return undefined
  let next = 0
  const take = (count: number) => {
    next += count
    return targets.slice(next - count, next)
  }
  const outcomes = rules.map((rule): Outcome<T> =>
    "url" in rule ? { target: take(1)[0], split: undefined } : { target: undefined, split: splitPick(rule.split, take(rule.split.length)) }
  )
  return new CompiledRoute(
    conditionsOf(rules),
    outcomes,
    settings.split === undefined ? undefined : splitPick(settings.split, take(settings.split.length)),
    options.linkId,
    bucketsFor(options.splitKey),
    options.geo,
    options.weight
  )
}
