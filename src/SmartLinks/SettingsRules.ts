import { Either } from "effect"
import { type InputProblem, problem } from "../Links/LinkErrors.ts"
import { InvalidInput } from "../Platform/Failure.ts"
import { codePointLength, hasControlCharacter, hasLoneSurrogate, isPlainObject } from "../Links/InputValues.ts"
import { MAX_TIMESTAMP } from "../Links/LinkDates.ts"
import { parseHttpUrl } from "../Links/Url.ts"
import { parseSubnet } from "../Platform/ClientIp.ts"
import type { ErrorCode } from "../Platform/ErrorCatalogue.ts"
import {
  BROWSERS,
  type Conditions,
  DEVICES,
  MAX_CONDITION_VALUES,
  MAX_CONDITIONS,
  MAX_DESCRIPTION,
  MAX_PASSWORD,
  MAX_PLACE_NAME,
  MAX_QUERY_NAME,
  MAX_QUERY_VALUE,
  MAX_RULES,
  MAX_SPLIT,
  MAX_TITLE,
  MIN_PASSWORD,
  MIN_SPLIT,
  OPERATING_SYSTEMS,
  type Preview,
  type Rule,
  type Split,
  type StoredSettings
} from "./SettingsModel.ts"

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** A PUT body read against the rules: the document to store and the password to hash, if any. */
export interface ReadSettings {
  readonly stored: StoredSettings
  readonly password: string | undefined
}

const TOP_LEVEL = new Set(["rules", "split", "password", "max_clicks", "expires_at", "expired_url", "og"])
const LANGUAGE = /^[a-z]{1,8}(?:-[a-z0-9]{1,8})*$/i
const COUNTRY = /^[a-z]{2}$/i
const MAX_COUNT = 1_000_000_000_000
/**
 * Query names refused: assigned into an object, `__proto__` is dropped (a condition on nothing,
 * matching every visitor), and the others shadow what every object inherits.
 */
const RESERVED_NAMES = new Set(["__proto__", "constructor", "prototype"])

/** Text a person can have written: no control characters, no lone surrogates, 1-`max` characters. */
const isText = (value: unknown, max: number): value is string =>
  typeof value === "string" && value.trim() !== "" && codePointLength(value) <= max && !hasControlCharacter(value) && !hasLoneSurrogate(value)

/** A key of the body as a message names it: plain short names as given, anything else not repeated. */
const named = (key: string) => (/^[A-Za-z0-9_.-]{1,40}$/.test(key) ? key : "(a key)")

const refused = (first: InputProblem, rest: ReadonlyArray<InputProblem> = []) => Either.left(new InvalidInput({ problems: [first, ...rest] }))

/** A setting left out or null is cleared. */
const isGiven = (value: unknown) => value !== undefined && value !== null

const isUnixSeconds = (value: unknown): value is number =>
  typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= MAX_TIMESTAMP

/**
 * Reads a PUT body (any JSON) against the settings rules: every problem is reported, each with its
 * own code and the place it is at (`rules[2].when.cidr[0]`); the body is never repeated.
 */
export const readSettings = (body: unknown, now: number): Either.Either<ReadSettings, InvalidInput> => {
  const problems: Array<InputProblem> = []
  const report = (code: ErrorCode, at: string) => {
    problems.push(problem(code, at))
  }
  if (!isPlainObject(body)) return refused(problem(10700, "the settings must be a JSON object"))
  for (const key of Object.keys(body)) if (!TOP_LEVEL.has(key)) report(10700, `${named(key)}: not a setting`)

  /** A destination URL by the link `url` rules, normalised. */
  const url = (value: unknown, at: string): string | undefined => {
    const parsed = typeof value === "string" ? parseHttpUrl(value, { assumeHttp: true }) : undefined
    if (parsed === undefined) report(10713, at)
    return parsed
  }

  /** A split: its size, each entry's fields, then the sum of the weights when every entry is whole. */
  const split = (value: unknown, at: string): Split | undefined => {
    if (!Array.isArray(value)) {
      report(10714, at)
      return undefined
    }
    const before = problems.length
    if (value.length < MIN_SPLIT || value.length > MAX_SPLIT) report(10714, at)
    const entries: Array<{ url: string; weight: number }> = []
    for (const [n, entry] of value.entries()) {
      const place = `${at}[${n}]`
      if (!isPlainObject(entry)) {
        report(10714, place)
        continue
      }
      for (const key of Object.keys(entry)) if (key !== "url" && key !== "weight") report(10714, `${place}.${named(key)}: not a field of a split entry`)
      const target = url(entry.url, `${place}.url`)
      const weight = entry.weight
      if (typeof weight !== "number" || !Number.isInteger(weight) || weight < 0 || weight > 100) report(10714, `${place}.weight`)
      else if (target !== undefined) entries.push({ url: target, weight })
    }
    if (problems.length > before) return undefined
    const sum = entries.reduce((total, entry) => total + entry.weight, 0)
    if (sum !== 100) report(10714, `${at}: the weights sum to ${sum}`)
    return sum === 100 ? entries : undefined
  }

  /** A condition's list of accepted values, each read by `item` (undefined when it is not one). */
  const list = <A>(value: unknown, at: string, code: ErrorCode, item: (raw: unknown) => A | undefined): ReadonlyArray<A> | undefined => {
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_CONDITION_VALUES) {
      report(code, at)
      return undefined
    }
    const read: Array<A> = []
    for (const [n, raw] of value.entries()) {
      const accepted = item(raw)
      if (accepted === undefined) report(code, `${at}[${n}]`)
      else read.push(accepted)
    }
    return read.length === value.length ? read : undefined
  }
  const oneOf =
    <L extends string>(allowed: ReadonlyArray<L>) =>
    (raw: unknown): L | undefined =>
      allowed.find((value) => value === raw)
  const matching = (pattern: RegExp) => (raw: unknown) => (typeof raw === "string" && pattern.test(raw) ? raw : undefined)
  const place = (raw: unknown) => (isText(raw, MAX_PLACE_NAME) ? raw : undefined)
  const subnet = (raw: unknown) => (typeof raw === "string" && parseSubnet(raw) !== undefined ? raw : undefined)

  const query = (value: unknown, at: string): Record<string, string | true> | undefined => {
    if (!isPlainObject(value) || Object.keys(value).length === 0) {
      report(10711, at)
      return undefined
    }
    const read: Record<string, string | true> = {}
    let whole = true
    for (const [name, expected] of Object.entries(value)) {
      if (RESERVED_NAMES.has(name)) {
        report(10711, `${at}.${name} is a reserved name`)
        whole = false
        continue
      }
      const good =
        isText(name, MAX_QUERY_NAME) && (expected === true || (typeof expected === "string" && codePointLength(expected) <= MAX_QUERY_VALUE && !hasLoneSurrogate(expected)))
      if (!good) {
        report(10711, `${at}.${named(name)}`)
        whole = false
      } else read[name] = expected
    }
    return whole ? read : undefined
  }

  const conditions = (value: unknown, at: string): Conditions | undefined => {
    if (!isPlainObject(value)) {
      report(10703, at)
      return undefined
    }
    const before = problems.length
    const keys = Object.keys(value)
    const queryCount = isPlainObject(value.query) ? Math.max(0, Object.keys(value.query).length - 1) : 0
    if (keys.length === 0 || keys.length + queryCount > MAX_CONDITIONS) report(10703, at)
    const read: Mutable<Conditions> = {}
    const set = <K extends keyof Conditions>(key: K, accepted: Conditions[K] | undefined) => {
      if (accepted !== undefined) read[key] = accepted
    }
    for (const key of keys) {
      const field = `${at}.${named(key)}`
      const given = value[key]
      switch (key) {
        case "device":
          set("device", list(given, field, 10704, oneOf(DEVICES)))
          break
        case "os":
          set("os", list(given, field, 10705, oneOf(OPERATING_SYSTEMS)))
          break
        case "browser":
          set("browser", list(given, field, 10706, oneOf(BROWSERS)))
          break
        case "language":
          set("language", list(given, field, 10707, matching(LANGUAGE)))
          break
        case "country":
          set("country", list(given, field, 10708, (raw) => matching(COUNTRY)(raw)?.toUpperCase()))
          break
        case "region":
          set("region", list(given, field, 10709, place))
          break
        case "city":
          set("city", list(given, field, 10719, place))
          break
        case "cidr":
          set("cidr", list(given, field, 10710, subnet))
          break
        case "query":
          set("query", query(given, field))
          break
        case "after":
        case "before":
          if (isUnixSeconds(given)) read[key] = given
          else report(10712, field)
          break
        default:
          report(10703, `${field}: not a condition`)
      }
    }
    if (read.after !== undefined && read.before !== undefined && read.after >= read.before) report(10712, `${at}.after`)
    return problems.length === before ? read : undefined
  }

  /** One rule: every field is read, whatever else is wrong with it, so each problem is reported. */
  const rule = (value: unknown, at: string): Rule | undefined => {
    if (!isPlainObject(value)) {
      report(10702, at)
      return undefined
    }
    for (const key of Object.keys(value)) if (key !== "when" && key !== "url" && key !== "split") report(10702, `${at}.${named(key)}: not a field of a rule`)
    const hasUrl = "url" in value
    const hasSplit = "split" in value
    if (!("when" in value)) report(10702, `${at}.when is missing`)
    if (hasUrl === hasSplit) report(10702, hasUrl ? `${at} has both url and split` : `${at} has neither url nor split`)
    const when = "when" in value ? conditions(value.when, `${at}.when`) : undefined
    const target = hasUrl ? url(value.url, `${at}.url`) : undefined
    const entries = hasSplit ? split(value.split, `${at}.split`) : undefined
    if (when === undefined || hasUrl === hasSplit) return undefined
    if (target !== undefined) return { when, url: target }
    return entries === undefined ? undefined : { when, split: entries }
  }

  const rules = (value: unknown): ReadonlyArray<Rule> | undefined => {
    if (!Array.isArray(value)) {
      report(10701, "rules")
      return undefined
    }
    if (value.length > MAX_RULES) report(10701, "rules")
    const read: Array<Rule> = []
    for (const [n, given] of value.entries()) {
      const accepted = rule(given, `rules[${n}]`)
      if (accepted !== undefined) read.push(accepted)
    }
    return read
  }

  const preview = (value: unknown): Preview | undefined => {
    if (!isPlainObject(value)) {
      report(10718, "og")
      return undefined
    }
    const read: Mutable<Preview> = {}
    for (const [key, given] of Object.entries(value)) {
      const image = key === "image" && typeof given === "string" ? parseHttpUrl(given, { assumeHttp: false }) : undefined
      if (key === "title" && isText(given, MAX_TITLE)) read.title = given
      else if (key === "description" && isText(given, MAX_DESCRIPTION)) read.description = given
      else if (image !== undefined) read.image = image
      else report(10718, `og.${named(key)}`)
    }
    return read
  }

  const stored: Mutable<StoredSettings> = {}
  const keep = <K extends keyof StoredSettings>(key: K, accepted: StoredSettings[K] | undefined) => {
    if (accepted !== undefined) stored[key] = accepted
  }
  let password: string | undefined
  if (isGiven(body.rules)) {
    const read = rules(body.rules)
    if (read !== undefined && read.length > 0) stored.rules = read
  }
  if (isGiven(body.split)) keep("split", split(body.split, "split"))
  if (isGiven(body.password)) {
    const given = body.password
    if (typeof given === "string" && codePointLength(given) >= MIN_PASSWORD && codePointLength(given) <= MAX_PASSWORD) password = given
    else report(10715, "password")
  }
  if (isGiven(body.max_clicks)) {
    const given = body.max_clicks
    if (typeof given === "number" && Number.isInteger(given) && given > 0 && given <= MAX_COUNT) stored.max_clicks = given
    else report(10716, "max_clicks")
  }
  if (isGiven(body.expires_at)) {
    const given = body.expires_at
    if (isUnixSeconds(given) && given > now) stored.expires_at = given
    else report(10717, "expires_at")
  }
  if (isGiven(body.expired_url)) keep("expired_url", url(body.expired_url, "expired_url"))
  if (isGiven(body.og)) keep("og", preview(body.og))
  const [first, ...rest] = problems
  return first === undefined ? Either.right({ stored, password }) : refused(first, rest)
}
