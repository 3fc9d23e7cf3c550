import { Either } from "effect"
import { randomBytes } from "node:crypto"
import { type InputProblem, problem } from "./LinkErrors.ts"
import type { LinkInputContext } from "./InputValues.ts"

export const MAX_ALIAS_LENGTH = 40
export const MIN_RAND_ALIAS_LENGTH = 4
export const DEFAULT_RAND_ALIAS_LENGTH = 6

/**
 * Aliases a link may not take, compared ignoring case: paths the service serves itself on a short
 * domain (`/api/...`, `/healthz`, `/readyz`, `/metrics`), paths browsers and crawlers ask every host for, and names a visitor
 * could mistake for the service's own pages.
 */
export const RESERVED_ALIASES: ReadonlyArray<string> = [
  "api",
  "healthz",
  "readyz",
  "metrics",
  "docs",
  "admin",
  "static",
  "assets",
  "login",
  "logout",
  "www",
  "qr",
  "favicon.ico",
  "robots.txt",
  "sitemap.xml",
  ".well-known"
]

const reserved = new Set(RESERVED_ALIASES)

export const isReservedAlias = (alias: string): boolean => reserved.has(alias.toLowerCase())

const ALIAS_CHARACTERS = /^[A-Za-z0-9._-]+$/

/**
 * An alias given on create (10102 bad, 10103 over 40, 10104 reserved) or by `/alias` on update
 * (10133 for all three). Characters are checked before the length, so a long alias with a space is
 * 10102. Only dots ("." or "..") is 10102: such a path segment is resolved away by browsers.
 * Display case is kept; uniqueness is the database's business.
 */
export const checkAlias = (text: string, context: LinkInputContext): Either.Either<string, InputProblem> => {
  const fail = (code: 10102 | 10103 | 10104) => Either.left(problem(context === "create" ? code : 10133))
  if (!ALIAS_CHARACTERS.test(text) || /^\.+$/.test(text)) return fail(10102)
  if (text.length > MAX_ALIAS_LENGTH) return fail(10103)
  if (isReservedAlias(text)) return fail(10104)
  return Either.right(text)
}

/** No 0/O/o and no 1/l/I: 8 digits, 24 upper and 24 lower case letters. */
export const ALIAS_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz"

// Bytes at or above the largest multiple of the alphabet size are dropped, so `byte % 56` is uniform.
const ACCEPT_BELOW = 256 - (256 % ALIAS_ALPHABET.length)
const MAX_DRAWS = 64

const cryptoRandom = (n: number): Uint8Array => randomBytes(n)

const draw = (length: number, random: (n: number) => Uint8Array): string => {
  let alias = ""
  for (let round = 0; round < MAX_DRAWS; round++) {
    const missing = length - alias.length
    for (const byte of random(missing + Math.ceil(missing / 4) + 1)) {
      if (byte < ACCEPT_BELOW) alias += ALIAS_ALPHABET.charAt(byte % ALIAS_ALPHABET.length)
      if (alias.length === length) return alias
    }
  }
  throw new Error("the random source keeps yielding unusable bytes")
}

/**
 * A random alias of `length` (4-40) characters of `ALIAS_ALPHABET`, never a reserved one. `random`
 * returns n random bytes (default: node's CSPRNG); tests pass their own. A length outside 4-40 is a
 * programming error (the request schema takes `rand_alias_length` in that range only) and throws.
 */
export const generateAlias = (
  length: number = DEFAULT_RAND_ALIAS_LENGTH,
  random: (n: number) => Uint8Array = cryptoRandom
): string => {
  if (!Number.isInteger(length) || length < MIN_RAND_ALIAS_LENGTH || length > MAX_ALIAS_LENGTH) {
    throw new RangeError(`alias length must be an integer from ${MIN_RAND_ALIAS_LENGTH} to ${MAX_ALIAS_LENGTH}, got ${length}`)
  }
  for (let attempt = 0; attempt < MAX_DRAWS; attempt++) {
    const alias = draw(length, random)
    if (!isReservedAlias(alias)) return alias
  }
  throw new Error("the random source keeps yielding reserved aliases")
}
