import Bowser from "bowser"
import { isbot } from "isbot"

export type Device = "desktop" | "mobile" | "tablet" | "bot" | "other"

export interface UserAgentClass {
  readonly device: Device
  readonly bot: boolean
}

import { MAX_REFERER, MAX_USER_AGENT } from "./ClickHandover.ts"

export { MAX_REFERER, MAX_USER_AGENT } from "./ClickHandover.ts"

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff

/** The user agent as stored: at most MAX_USER_AGENT UTF-16 units, never half a surrogate pair; "" when missing. */
export const truncateUserAgent = (userAgent: string | undefined): string => {
  if (userAgent === undefined) return ""
  if (userAgent.length <= MAX_USER_AGENT) return userAgent
  const end = isHighSurrogate(userAgent.charCodeAt(MAX_USER_AGENT - 1)) ? MAX_USER_AGENT - 1 : MAX_USER_AGENT
  return userAgent.slice(0, end)
}

const utf8 = new TextDecoder("utf-8", { fatal: true })
const NOT_ASCII = /[^\x00-\x7f]/
const NOT_BYTES = /[^\x00-\xff]/

/**
 * A request header's value as Node gives it (a character per byte, so UTF-8 `＝` comes as
 * "ï¼\x9d") read as UTF-8 text: on the click writer's thread, not the redirect's, and after one
 * scan for the ASCII values most headers are. Bytes that are not UTF-8 stay Latin-1, as before; a
 * value at `limit` (the redirect thread cut it there by bytes) loses a character cut in half.
 */
export const headerText = (value: string | undefined, limit: number): string | undefined => {
  if (value === undefined || !NOT_ASCII.test(value) || NOT_BYTES.test(value)) return value
  let bytes = Buffer.from(value, "latin1")
  if (value.length >= limit) bytes = bytes.subarray(0, wholeCharacters(bytes))
  try {
    return utf8.decode(bytes)
  } catch {
    return value
  }
}

/** The length of `bytes` without a UTF-8 sequence cut short at its end. */
const wholeCharacters = (bytes: Uint8Array) => {
  let start = bytes.length - 1
  while (start >= 0 && bytes.length - start < 4 && ((bytes[start] ?? 0) & 0xc0) === 0x80) start--
  const lead = bytes[start] ?? 0
  if (start < 0 || lead < 0xc0) return bytes.length
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2
  return bytes.length - start < needed ? start : bytes.length
}

/** A memo of `compute` holding at most `limit` keys (all forgotten at once when full). */
export const boundedMemo = <A>(limit: number, compute: (key: string) => A) => {
  const known = new Map<string, A>()
  return (key: string): A => {
    let value = known.get(key)
    if (value === undefined) {
      if (known.size >= limit) known.clear()
      value = compute(key)
      known.set(key, value)
    }
    return value
  }
}

const FRONT_SLOTS = 1024

/** A cheap hash of every third character and the length: where in the front table a key sits. */
const frontSlot = (text: string) => {
  let hash = text.length
  for (let i = 0; i < text.length; i += 3) hash = Math.imul(hash ^ text.charCodeAt(i), 0x9e3779b1)
  return (hash ^ (hash >>> 15)) & (FRONT_SLOTS - 1)
}

/**
 * `boundedMemo` for what a request's headers bring (user agents, languages, addresses), with a
 * direct-mapped table of the last key seen at each of 1,024 places in front. Every request brings
 * its headers as new strings, whose full hash a Map computes every time (about 0.2 µs for a
 * browser's 110-character agent); the front table reads a third of the characters and compares the
 * rest. Keys that share a place take turns in it and are answered by the Map, as without it.
 */
export const stringMemo = <A>(limit: number, compute: (key: string) => A): ((key: string) => A) => {
  const backing = boundedMemo(limit, compute)
  const front = new Array<{ readonly key: string; readonly value: A } | undefined>(FRONT_SLOTS).fill(undefined)
  return (key) => {
    const slot = frontSlot(key)
    const entry = front[slot]
    if (entry !== undefined && entry.key === key) return entry.value
    const value = backing(key)
    front[slot] = { key, value }
    return value
  }
}

const OTHER: UserAgentClass = { device: "other", bot: false }
const BOT: UserAgentClass = { device: "bot", bot: true }

/**
 * Device class of a user agent. isbot alone decides what is a bot (its list includes curl, wget,
 * HTTP libraries, link previewers, headless browsers and user agents with no browser token); for the
 * rest Bowser's platform type gives desktop, mobile or tablet, and anything else (TV, unknown) is
 * "other". A missing or blank user agent is "other" and not a bot.
 */
export const classifyUserAgent = (userAgent: string | undefined): UserAgentClass => {
  const ua = truncateUserAgent(userAgent)
  if (ua.trim() === "") return OTHER
  if (isbot(ua)) return BOT
  try {
    const type = Bowser.parse(ua).platform.type
    return type === "desktop" || type === "mobile" || type === "tablet" ? { device: type, bot: false } : OTHER
  } catch {
    return OTHER
  }
}

/** Operating system and browser of a user agent as Bowser names them ("macOS", "Microsoft Edge"); "" when unknown. */
export const platformOf = (userAgent: string | undefined): { readonly os: string; readonly browser: string } => {
  const ua = truncateUserAgent(userAgent)
  if (ua.trim() === "") return { os: "", browser: "" }
  try {
    const parsed = Bowser.parse(ua)
    return { os: parsed.os.name ?? "", browser: parsed.browser.name ?? "" }
  } catch {
    return { os: "", browser: "" }
  }
}

/** The lower-cased host name of an http(s) Referer (IDN as punycode, no port), or "direct". */
export const referrerHost = (referer: string | undefined): string => {
  if (referer === undefined || referer === "") return "direct"
  try {
    const url = new URL(referer.slice(0, MAX_REFERER))
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") return "direct"
    return url.hostname.toLowerCase()
  } catch {
    return "direct"
  }
}
