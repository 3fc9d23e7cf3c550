import { BlockList } from "node:net"
import * as crypto from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"
import { classifyUserAgent, platformOf, stringMemo, truncateUserAgent } from "../Clicks/ClickSource.ts"
import type { GeoLocation } from "../Clicks/GeoIp.ts"
import { parseSubnet } from "../Platform/ClientIp.ts"
import { type HalfSipKey, halfSipHash32, halfSipHash64, halfSipKey } from "./HalfSipHash.ts"
import { type Conditions, destinationsOf, type Split, type StoredSettings, type Target } from "./SettingsModel.ts"

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

export type GeoLookup = (ip: string) => GeoLocation

export interface SmartRoute<T extends Target = Target> {
  /** Where this visit goes: a rule's or the split's destination, or undefined for the link's URL. */
  readonly choose: (visit: Visit) => T | undefined
  /** What the cache counts the compiled settings as, in bytes. */
  readonly weight: number
}

const OS_NAMES: Readonly<Record<string, string>> = {
  iOS: "ios",
  Android: "android",
  Windows: "windows",
  macOS: "macos",
  Linux: "linux"
}

const BROWSER_NAMES: Readonly<Record<string, string>> = {
  Chrome: "chrome",
  Chromium: "chrome",
  Safari: "safari",
  Firefox: "firefox",
  "Microsoft Edge": "edge",
  Opera: "opera",
  "Samsung Internet for Android": "samsung"
}

interface AgentTraits {
  readonly device: string
  readonly os: string
  readonly browser: string
}

// A user agent takes tens of microseconds to parse, and the same few make most visits.
const traitsOf = stringMemo(10_000, (userAgent): AgentTraits => {
  const { os, browser } = platformOf(userAgent)
  return { device: classifyUserAgent(userAgent).device, os: OS_NAMES[os] ?? "", browser: BROWSER_NAMES[browser] ?? "" }
})

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

const NOWHERE: GeoLocation = { country: null, region: null, city: null }

/** What one visit's conditions have asked so far: each fact is found once, when first needed. */
class Facts {
  private agent: AgentTraits | undefined
  private place: GeoLocation | undefined
  private params: URLSearchParams | undefined
  private language: string | undefined
  private seconds: number | undefined
  constructor(
    readonly visit: Visit,
    private readonly geo: GeoLookup | undefined
  ) {}
  get traits(): AgentTraits {
    // Cut first: the memo's keys stay small whatever a client sends.
    this.agent ??= traitsOf(truncateUserAgent(this.visit.headers["user-agent"]))
    return this.agent
  }
  get location(): GeoLocation {
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

const enum Kind {
  After,
  Before,
  Query,
  Cidr,
  Language,
  Device,
  Os,
  Browser,
  Country,
  Region,
  City
}

/**
 * One condition as data, read by `holds`: every link's conditions have this one shape and one
 * evaluator, so the redirect path runs the same code for a thousand links' rules (closures made per
 * link cost it 2-4 µs a visit over 1,000 links, against 0.7 over one).
 */
class Test {
  constructor(
    readonly kind: Kind,
    /** Lower case (country: upper case): device, os, browser, country, region, city. */
    readonly values: ReadonlySet<string> | null,
    /** Language tags, lower case. */
    readonly tags: ReadonlyArray<string> | null,
    readonly seconds: number,
    readonly query: ReadonlyArray<readonly [string, string | true]> | null,
    readonly subnets: BlockList | null
  ) {}
}

const valuesTest = (kind: Kind, values: ReadonlyArray<string>) => new Test(kind, new Set(values.map((value) => value.toLowerCase())), null, 0, null, null)
// Stored upper case, as GeoIP has them: compared as they are, with no string made per visit.
const countryTest = (values: ReadonlyArray<string>) => new Test(Kind.Country, new Set(values.map((value) => value.toUpperCase())), null, 0, null, null)
const timeTest = (kind: Kind.After | Kind.Before, seconds: number) => new Test(kind, null, null, seconds, null, null)

const cidrTest = (values: ReadonlyArray<string>) => {
  const list = new BlockList()
  for (const value of values) {
    const subnet = parseSubnet(value)
    if (subnet !== undefined) list.addSubnet(subnet.ip, subnet.bits, subnet.family)
  }
  return new Test(Kind.Cidr, null, null, 0, null, list)
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

const has = (values: ReadonlySet<string> | null, value: string | null) => value !== null && values !== null && values.has(value)

const holds = (test: Test, facts: Facts): boolean => {
  switch (test.kind) {
    case Kind.After:
      return facts.now >= test.seconds
    case Kind.Before:
      return facts.now < test.seconds
    case Kind.Query:
      return queryHolds(test.query ?? [], facts.query)
    case Kind.Cidr:
      return test.subnets !== null && inList(test.subnets, facts.visit.ip)
    case Kind.Language:
      return languageHolds(test.tags ?? [], facts.preferredLanguage)
    case Kind.Device:
      return has(test.values, facts.traits.device)
    case Kind.Os:
      return has(test.values, facts.traits.os)
    case Kind.Browser:
      return has(test.values, facts.traits.browser)
    case Kind.Country:
      return has(test.values, facts.location.country)
    case Kind.Region:
      return has(test.values, facts.location.region?.toLowerCase() ?? null)
    case Kind.City:
      return has(test.values, facts.location.city?.toLowerCase() ?? null)
  }
}

/** Whether every test holds. */
const passes = (tests: ReadonlyArray<Test>, facts: Facts) => {
  for (const test of tests) if (!holds(test, facts)) return false
  return true
}

/** The tests of one rule's conditions, cheapest first. */
const testsOf = (when: Conditions): ReadonlyArray<Test> => {
  const tests: Array<Test> = []
  if (when.after !== undefined) tests.push(timeTest(Kind.After, when.after))
  if (when.before !== undefined) tests.push(timeTest(Kind.Before, when.before))
  if (when.query !== undefined) tests.push(new Test(Kind.Query, null, null, 0, Object.entries(when.query), null))
  if (when.cidr !== undefined) tests.push(cidrTest(when.cidr))
  if (when.language !== undefined) tests.push(new Test(Kind.Language, null, when.language.map((value) => value.toLowerCase()), 0, null, null))
  if (when.device !== undefined) tests.push(valuesTest(Kind.Device, when.device))
  if (when.os !== undefined) tests.push(valuesTest(Kind.Os, when.os))
  if (when.browser !== undefined) tests.push(valuesTest(Kind.Browser, when.browser))
  if (when.country !== undefined) tests.push(countryTest(when.country))
  if (when.region !== undefined) tests.push(valuesTest(Kind.Region, when.region))
  if (when.city !== undefined) tests.push(valuesTest(Kind.City, when.city))
  return tests
}

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
const sharedConditions = sharedBy<ReadonlyArray<ReadonlyArray<Test>>>(8 * 1024 * 1024)
const sharedEnds = sharedBy<ReadonlyArray<number>>(64 * 1024)
const NO_CONDITIONS: ReadonlyArray<ReadonlyArray<Test>> = []

const conditionsOf = (rules: ReadonlyArray<{ readonly when: Conditions }>) =>
  rules.length === 0 ? NO_CONDITIONS : sharedConditions(JSON.stringify(rules.map((rule) => rule.when)), () => rules.map((rule) => testsOf(rule.when)))

/**
 * A link's compiled route: a class, so that every link's `choose` is one method of one shape and the
 * redirect path's call to it stays monomorphic whatever the number of links. Rule i's conditions are
 * `conditions[i]` (shared with every link that has the same), its outcome `outcomes[i]` (the link's own).
 */
class CompiledRoute<T extends Target> implements SmartRoute<T> {
  constructor(
    private readonly conditions: ReadonlyArray<ReadonlyArray<Test>>,
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
