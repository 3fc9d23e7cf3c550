import { BlockList } from "node:net"
import * as crypto from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"
import { boundedMemo, classifyUserAgent, platformOf, truncateUserAgent } from "../Clicks/ClickSource.ts"
import type { GeoLocation } from "../Clicks/GeoIp.ts"
import { parseSubnet } from "../Platform/ClientIp.ts"
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

export interface SmartRoute {
  /** Where this visit goes: a rule's or the split's destination, or undefined for the link's URL. */
  readonly choose: (visit: Visit) => Target | undefined
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
const traitsOf = boundedMemo(10_000, (userAgent): AgentTraits => {
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
const languageOf = boundedMemo(1000, preferredLanguage)

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

type Test = (facts: Facts) => boolean

/** Whether every test passes: a loop, not `every` with a closure made per rule and visit. */
const passes = (tests: ReadonlyArray<Test>, facts: Facts) => {
  for (const test of tests) if (!test(facts)) return false
  return true
}

const among = (values: ReadonlyArray<string>, read: (facts: Facts) => string | null): Test => {
  const accepted = new Set(values.map((value) => value.toLowerCase()))
  return (facts) => {
    const value = read(facts)
    return value !== null && accepted.has(value.toLowerCase())
  }
}

const languageTest = (values: ReadonlyArray<string>): Test => {
  const tags = values.map((value) => value.toLowerCase())
  return (facts) => {
    const preferred = facts.preferredLanguage
    return preferred !== "" && tags.some((tag) => preferred === tag || preferred.startsWith(`${tag}-`))
  }
}

const cidrTest = (values: ReadonlyArray<string>): Test => {
  const list = new BlockList()
  for (const value of values) {
    const subnet = parseSubnet(value)
    if (subnet !== undefined) list.addSubnet(subnet.ip, subnet.bits, subnet.family)
  }
  return (facts) => {
    const ip = facts.visit.ip
    const family = ip.includes(":") ? "ipv6" : "ipv4"
    try {
      return list.check(ip, family)
    } catch {
      return false
    }
  }
}

const queryTest = (expected: Readonly<Record<string, string | true>>): Test => {
  const entries = Object.entries(expected)
  return (facts) => entries.every(([name, value]) => (value === true ? facts.query.has(name) : facts.query.getAll(name).includes(value)))
}

/** The tests of one rule's conditions, cheapest first. */
const testsOf = (when: Conditions): ReadonlyArray<Test> => {
  const tests: Array<Test> = []
  if (when.after !== undefined) {
    const after = when.after
    tests.push((facts) => facts.now >= after)
  }
  if (when.before !== undefined) {
    const before = when.before
    tests.push((facts) => facts.now < before)
  }
  if (when.query !== undefined) tests.push(queryTest(when.query))
  if (when.cidr !== undefined) tests.push(cidrTest(when.cidr))
  if (when.language !== undefined) tests.push(languageTest(when.language))
  if (when.device !== undefined) tests.push(among(when.device, (facts) => facts.traits.device))
  if (when.os !== undefined) tests.push(among(when.os, (facts) => facts.traits.os))
  if (when.browser !== undefined) tests.push(among(when.browser, (facts) => facts.traits.browser))
  if (when.country !== undefined) tests.push(among(when.country, (facts) => facts.location.country))
  if (when.region !== undefined) tests.push(among(when.region, (facts) => facts.location.region))
  if (when.city !== undefined) tests.push(among(when.city, (facts) => facts.location.city))
  return tests
}

const needsPlace = (when: Conditions) => when.country !== undefined || when.region !== undefined || when.city !== undefined

/** Whether any rule of the settings reads the visitor's place (the GeoIP lookup must be loaded first). */
export const settingsNeedGeo = (settings: StoredSettings) => (settings.rules ?? []).some((rule) => needsPlace(rule.when))

// One-shot hashing (Node 20.12 and later) costs a third of an Hmac object's setup per visit; the
// digest as "binary" (latin1: one character a byte) costs a fifth less than as hex.
const sha256Bytes: (text: string) => string =
  typeof crypto.hash === "function"
    ? (text) => crypto.hash("sha256", text, "binary")
    : (text) => crypto.createHash("sha256").update(text).digest("binary")

/**
 * The bucket 0-99 of a visitor of a link: SHA-256 of the secret key, then link, address and user
 * agent (a keyed hash: without the key, nobody can tell or choose a visitor's bucket), its first 32
 * bits (big-endian) modulo 100; the same every visit and on every instance with the same key.
 */
export const splitBucket = (key: string, linkId: number, visit: Visit): number => {
  const digest = sha256Bytes(`${key}\n${linkId}\n${visit.ip}\n${visit.headers["user-agent"] ?? ""}`)
  return (digest.charCodeAt(0) * 0x1000000 + ((digest.charCodeAt(1) << 16) | (digest.charCodeAt(2) << 8) | digest.charCodeAt(3))) % 100
}

type Destination = (visit: Visit) => Target

/** A split's pick by the visitor's bucket: entry i takes the buckets from the sum of the weights before it. */
const splitDestination = (split: Split, targets: ReadonlyArray<Target>, bucketOf: (visit: Visit) => number): Destination => {
  const ends: Array<number> = []
  let sum = 0
  for (const entry of split) {
    sum += entry.weight
    ends.push(sum)
  }
  return (visit) => {
    const bucket = bucketOf(visit)
    const index = ends.findIndex((end) => bucket < end)
    return targets[index === -1 ? targets.length - 1 : index]!
  }
}

/**
 * The settings compiled against their stored targets (in `destinationsOf` order), or undefined
 * when they hold neither rules nor a split, or do not pair with their targets.
 */
export const compileRoute = (
  settings: StoredSettings,
  targets: ReadonlyArray<Target>,
  options: { readonly linkId: number; readonly splitKey: string; readonly geo: GeoLookup | undefined; readonly weight: number }
): SmartRoute | undefined => {
  const rules = settings.rules ?? []
  if ((rules.length === 0 && settings.split === undefined) || destinationsOf(settings).length !== targets.length) return undefined
  let next = 0
  const take = (count: number) => {
    next += count
    return targets.slice(next - count, next)
  }
  const bucketOf = (visit: Visit) => splitBucket(options.splitKey, options.linkId, visit)
  const compiled = rules.map((rule) => {
    const tests = testsOf(rule.when)
    if (!("url" in rule)) return { tests, destination: splitDestination(rule.split, take(rule.split.length), bucketOf) }
    // Present: the targets were counted above.
    const target = take(1)[0]!
    return { tests, destination: (): Target => target }
  })
  const fallback = settings.split === undefined ? undefined : splitDestination(settings.split, take(settings.split.length), bucketOf)
  return {
    weight: options.weight,
    choose: (visit) => {
      const facts = new Facts(visit, options.geo)
      for (const rule of compiled) {
        if (passes(rule.tests, facts)) return rule.destination(visit)
      }
      return fallback?.(visit)
    }
  }
}
