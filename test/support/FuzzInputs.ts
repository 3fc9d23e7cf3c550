import { FastCheck as fc } from "effect"
import { PASSWORD } from "./Http.ts"
import { type Endpoint } from "./ApiContract.ts"
import { type Fixtures, validBody } from "./FuzzFixtures.ts"

/** fast-check arbitraries of hostile input for `test/api-fuzz.test.ts`: texts, JSON values, bodies, ids, query strings, credentials. */

/** Percent-encoding of any string, lone surrogates included (as U+FFFD, as a browser would send them). */
export const encode = (text: string) => {
  try {
    return encodeURIComponent(text)
  } catch {
    return Array.from(Buffer.from(text, "utf8"), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("")
  }
}

export const HOSTILE_TEXT = [
  "", " ", "0", "-1", "1.5", "1e308", "-0", "NaN", "Infinity", "null", "true", "[]", "{}", "\u0000", "a\u0000b", "\uD800",
  "ä", "😀", "İ", "\u202Eevil", "'; DROP TABLE links; --", "<script>alert(1)</script>", "../../etc/passwd", "a/b",
  "%2F", "%00", "%", "\r\nX-Injected: 1", "x".repeat(300), "api", "__proto__", "constructor", "9".repeat(30), "0x10",
  "all", "me", "latest", "oldest", "png", "svg", "eps", "desktop", "bot", "US", "us", "replace", "/alias", "status",
  "disabled", "homepage", "1", "2", "999999", "http://", "javascript:alert(1)", "http://127.0.0.1:1/", "\t", "\\"
] as const

export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...HOSTILE_TEXT), weight: 4 },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 2 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 12 }), weight: 1 },
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 8 }), weight: 1 },
  { arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String), weight: 1 },
  { arbitrary: fc.double({ noNaN: true }).map(String), weight: 1 }
)

/** `depth` arrays or objects inside each other. */
export const nested = (depth: number, kind: "array" | "object"): unknown => {
  let value: unknown = kind === "array" ? [] : {}
  for (let i = 0; i < depth; i++) value = kind === "array" ? [value] : { a: value }
  return value
}

/** Any JSON value a client might send in a field: wrong types, nesting, huge strings and numbers. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 2, [], {}, [null], [[]], { "": 1 }), weight: 3 },
  { arbitrary: hostileText, weight: 4 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
  { arbitrary: fc.array(hostileText, { maxLength: 5 }), weight: 1 },
  { arbitrary: fc.dictionary(hostileText, hostileText, { maxKeys: 4 }), weight: 1 },
  { arbitrary: fc.tuple(fc.integer({ min: 20, max: 3000 }), fc.constantFrom("array" as const, "object" as const)).map(([d, k]) => nested(d, k)), weight: 1 },
  { arbitrary: fc.integer({ min: 1000, max: 70_000 }).map((n) => "x".repeat(n)), weight: 1 }
)

/** Whole bodies that are not JSON, or JSON that no parser should like. */
export const INVALID_JSON = [
  "", " ", "{", "}", "[", "{\"url\":", "{'url':'x'}", "{url: 1}", "undefined", "NaN", "[1,]", "{\"a\":1,}", "\uFEFF{}",
  "\u0000", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\u0000\"}", "1e99999", "-", "tru", "nul", "\"unterminated", "{\"a\":1}{\"b\":2}",
  "[".repeat(30_000) + "]".repeat(30_000), "{\"a\":".repeat(8_000) + "1" + "}".repeat(8_000), "\xff\xfe", "<xml/>", "a=1&b=2"
] as const

export const CONTENT_TYPES = [
  "application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/json; charset=latin1", "text/plain",
  "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "application/octet-stream", "",
  "application/json, text/plain", "*/*", "application/vnd.api+json", "text/json"
] as const

export interface BodyCase {
  readonly body: string | undefined
  readonly contentType: string | undefined
  readonly chunked: boolean
}

/** A mutated body of the endpoint: one field wrong, a field missing, unknown fields, a wholly wrong body, or not JSON at all. */
export const bodyCase = (endpoint: Endpoint, f: Fixtures): fc.Arbitrary<BodyCase> => {
  const fields = endpoint.bodyFields.length > 0 ? endpoint.bodyFields : ["op", "path", "value"]
  const base = () => validBody(endpoint, f, f.owner)
  const asObject = (value: unknown): Record<string, unknown> =>
    typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value } : {}
  /** For an array body (E12), the change applies to its first operation. */
  const edit = (change: (object: Record<string, unknown>) => void): unknown => {
    const value = base()
    if (Array.isArray(value)) {
      const first = asObject(value[0])
      change(first)
      return [first, ...value.slice(1)]
    }
    const object = asObject(value)
    change(object)
    return object
  }
  const json: fc.Arbitrary<string> = fc.oneof(
    fc.tuple(fc.constantFrom(...fields), hostileJson).map(([field, value]) => JSON.stringify(edit((o) => void (o[field] = value)))),
    fc.constantFrom(...fields).map((field) => JSON.stringify(edit((o) => void delete o[field]))),
    fc.tuple(hostileText, hostileJson).map(([field, value]) => JSON.stringify(edit((o) => void (o[field] = value)))),
    fc.dictionary(fc.constantFrom(...fields), hostileJson, { maxKeys: fields.length }).map((record) => JSON.stringify(endpoint.body === "array" ? [record] : record)),
    fc.array(fc.dictionary(fc.constantFrom(...fields), hostileJson, { maxKeys: 3 }), { maxLength: 8 }).map((ops) => JSON.stringify(ops)),
    hostileJson.map((value) => JSON.stringify(value) ?? "null"),
    fc.tuple(fc.constantFrom(...fields), fc.integer({ min: 60_000, max: 67_000 })).map(([field, n]) =>
      JSON.stringify(edit((o) => void (o[field] = "y".repeat(n))))
    )
  )
  const text = fc.oneof({ arbitrary: json, weight: 6 }, { arbitrary: fc.constantFrom<string>(...INVALID_JSON), weight: 2 })
  const type = fc.oneof(
    { arbitrary: fc.constant<string | undefined>("application/json"), weight: 6 },
    { arbitrary: fc.constantFrom<string | undefined>(...CONTENT_TYPES, undefined), weight: 2 }
  )
  return fc.record({
    body: fc.option(text, { nil: undefined, freq: 20 }),
    contentType: type,
    chunked: fc.boolean()
  })
}

export const HOSTILE_IDS = [
  "0", "-1", "-0", "1.5", "1e3", "1e400", "9007199254740992", "9007199254740993", "99999999999999999999999999", "abc", "NaN",
  "Infinity", "null", "undefined", "true", "%20", "%2F", "a%2Fb", "%00", "%C3%A4", "%F0%9F%98%80", "%E2%80%AE1", "..", ".",
  "%2E%2E", "1;2", "1,2", "[1]", "%7B%7D", "'1'", "%22", "\\", "~", "$", "*", "1%23", "%FF", "%"
] as const

/** Spellings of a real id that are not the canonical positive integer (each a 404). */
export const misspelt = (id: number) => [`${id}%20`, `+${id}`, `0${id}`, `${id}.0`, `${id}e0`, `0x${id.toString(16)}`, `${id}%0A`, `%20${id}`]

/** Ids that name nothing: never a canonical id small enough to exist in this test's database. */
export const hostileId: fc.Arbitrary<string> = fc
  .oneof(
    { arbitrary: fc.constantFrom(...HOSTILE_IDS), weight: 4 },
    { arbitrary: fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String), weight: 2 },
    { arbitrary: fc.integer({ min: 100_000, max: 2_000_000_000 }).map(String), weight: 1 },
    { arbitrary: fc.string({ minLength: 1, maxLength: 12 }).map(encode), weight: 2 },
    { arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 6 }).map(encode), weight: 1 }
  )
  .filter((id) => !/^[1-9][0-9]{0,4}$/.test(id))

/** Query strings of known names with wrong values, unknown names, repeated names and broken encoding. */
export const queryString = (endpoint: Endpoint): fc.Arbitrary<string> => {
  const known = endpoint.query.length > 0 ? endpoint.query : ["page"]
  const name = fc.oneof(
    { arbitrary: fc.constantFrom(...known), weight: 5 },
    { arbitrary: fc.constantFrom("unknown", "", "__proto__", "constructor", "page[]", "a[b]", "PAGE", "Domain_Id"), weight: 1 },
    { arbitrary: fc.string({ maxLength: 8 }), weight: 1 }
  )
  const pair = fc.tuple(name, hostileText).map(([n, v]) => `${encode(n)}=${encode(v)}`)
  const raw = fc.constantFrom("%", "%zz", "%E0%A4%A", "a=%", "=1", "&&", "a", "a==b", "%00=%00", "page=1&page=2", "page=%FF")
  return fc
    .array(fc.oneof({ arbitrary: pair, weight: 5 }, { arbitrary: raw, weight: 1 }), { minLength: 1, maxLength: 6 })
    .map((parts) => parts.join("&"))
}

export type AuthVariant =
  | "owner" | "none" | "empty" | "scheme only" | "garbage" | "basic" | "flipped" | "suffixed" | "lower-case scheme"
  | "no scheme" | "long" | "other account" | "member" | "free plan" | "twice"

export const AUTH_VARIANTS: ReadonlyArray<AuthVariant> = [
  "owner", "none", "empty", "scheme only", "garbage", "basic", "flipped", "suffixed", "lower-case scheme", "no scheme", "long",
  "other account", "member", "free plan", "twice"
]

/** Variants that are certainly not a valid token: 401 10000 on every authenticated endpoint. */
export const INVALID_AUTH: ReadonlySet<AuthVariant> = new Set(["none", "empty", "scheme only", "garbage", "basic", "flipped", "suffixed", "no scheme", "long"])

export const authorization = (variant: AuthVariant, f: Fixtures): string | undefined => {
  const flip = (token: string) => `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`
  switch (variant) {
    case "owner":
      return `Bearer ${f.owner.token}`
    case "none":
      return undefined
    case "empty":
      return ""
    case "scheme only":
      return "Bearer"
    case "garbage":
      return "Bearer \u00ff\u00fe not a token"
    case "basic":
      return `Basic ${Buffer.from(`${f.owner.email}:${PASSWORD}`).toString("base64")}`
    case "flipped":
      return `Bearer ${flip(f.owner.token)}`
    case "suffixed":
      return `Bearer ${f.owner.token}x`
    case "lower-case scheme":
      return `bearer ${f.owner.token}`
    case "no scheme":
      return f.owner.token
    case "long":
      return `Bearer ${"a".repeat(8000)}`
    case "other account":
      return `Bearer ${f.other.token}`
    case "member":
      return `Bearer ${f.member.token}`
    case "free plan":
      return `Bearer ${f.free.token}`
    case "twice":
      return `Bearer ${f.owner.token}, Bearer ${f.other.token}`
  }
}

export const ODD_HOSTS = ["", "a b", "[", "x:y:z", "ünï.example", "%", "localhost:99999", "h".repeat(300), "[::1]:80", "example.com:", "@evil"] as const
