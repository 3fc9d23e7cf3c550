import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Option, Schema } from "effect"
import type { InputProblem } from "../src/Links/LinkErrors.ts"
import { CreateLink, type CreateLinkInput, UpdateLink } from "../src/Links/LinkFields.ts"
import { readCreateLink } from "../src/Links/LinkInput.ts"
import { type LinkChanges, readLinkPatch } from "../src/Links/LinkPatch.ts"
import {
  ALIAS_ALPHABET,
  appendUtmValues,
  buildRedirectUrl,
  checkAlias,
  checkNotes,
  checkScheduleDate,
  checkScheduleExclusive,
  checkTags,
  checkUtmFields,
  generateAlias,
  MAX_TIMESTAMP,
  RESERVED_ALIASES,
  type UtmTemplateFields
} from "../src/Links/LinkRules.ts"
import { type Invalid, isInvalid } from "../src/Platform/Coded.ts"
import { timestampOfDayOffset } from "../src/V3/V3Adapter.ts"

type Outcome = { readonly ok: unknown } | { readonly code: number }

const outcome = <A>(result: Either.Either<A, InputProblem>): Outcome =>
  Either.match(result, { onLeft: (error) => ({ code: error.code }), onRight: (ok) => ({ ok }) })

const ok = (value: unknown): Outcome => ({ ok: value })
const code = (n: number): Outcome => ({ code: n })

/**
 * The checkers take values of their fields' types; the request schemas check the types. So a value
 * as a client sends it goes through both, as in the service: E4's field `name` decoded by
 * `CreateLink` (a value of another type is its code), then, given, its checker; left out or null,
 * `absent`.
 */
const onCreate = <K extends keyof CreateLinkInput>(
  name: K,
  raw: unknown,
  check: (value: Exclude<CreateLinkInput[K], Invalid | null | undefined>) => Either.Either<unknown, InputProblem>,
  absent: Outcome = { ok: undefined }
): Outcome => {
  const value = Schema.decodeUnknownSync(CreateLink)(raw === undefined ? {} : { [name]: raw })[name]
  if (isInvalid(value)) return code(value.code)
  if (value === undefined || value === null) return absent
  return outcome(check(value as Exclude<CreateLinkInput[K], Invalid | null | undefined>))
}

/** E4 with a valid url and these fields (undefined ones left out), read as the service reads it: the draft or the first problem. */
const created = (fields: Record<string, unknown>, template?: UtmTemplateFields) =>
  Effect.runSync(
    Effect.either(
      readCreateLink(
        Schema.decodeUnknownSync(CreateLink)(
          Object.fromEntries(Object.entries({ url: "https://example.com/", ...fields }).filter(([, value]) => value !== undefined))
        ),
        NOW,
        () => Effect.succeed(Option.fromNullable(template))
      )
    )
  )

/** One E12 operation on `path` with this value (none when undefined), read as the service reads it. */
const updated = (path: string, raw: unknown) =>
  readLinkPatch(Schema.decodeUnknownSync(UpdateLink)([{ op: "replace", path, ...(raw === undefined ? {} : { value: raw }) }]), NOW)

const updateOutcome = (path: string, raw: unknown, pick: (changes: LinkChanges) => unknown): Outcome => {
  const reading = updated(path, raw)
  const [first] = reading.problems
  return first === undefined ? ok(pick(reading.changes)) : code(first.code)
}

const mixedCase = (word: string) =>
  [...word].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join("")

const NOW = 1_700_000_000
const DAY = 86_400

describe("checkAlias", () => {
  const cases: ReadonlyArray<readonly [string, unknown, "ok" | 10102 | 10103 | 10104]> = [
    ["1 character", "a", "ok"],
    ["40 characters", "a".repeat(40), "ok"],
    ["every allowed character", "AZaz09-_.", "ok"],
    ["a dot inside", "a.b", "ok"],
    ["a leading dot", ".a", "ok"],
    ["dot dot inside", "a..b", "ok"],
    ["a hyphen only", "-", "ok"],
    ["an underscore only", "_", "ok"],
    ["a reserved word as a prefix", "apis", "ok"],
    ["empty", "", 10102],
    ["41 characters", "a".repeat(41), 10103],
    ["1000 characters", "b".repeat(1000), 10103],
    ["41 characters with a space", `${"a".repeat(40)} `, 10102],
    ["a single dot", ".", 10102],
    ["two dots", "..", 10102],
    ["three dots", "...", 10102],
    ["unicode letters", "café", 10102],
    ["CJK", "日本", 10102],
    ["emoji", "😀", 10102],
    ["fullwidth letters", "ａｂｃ", 10102],
    ["Kelvin sign", "\u212Aey", 10102],
    ["an encoded slash", "%2F", 10102],
    ["a slash", "a/b", 10102],
    ["a backslash", "a\\b", 10102],
    ["a space", "a b", 10102],
    ["a trailing newline", "abc\n", 10102],
    ["a question mark", "a?b", 10102],
    ["a hash", "a#b", 10102],
    ["a plus", "a+b", 10102],
    ["a tilde", "a~b", 10102],
    ["a number", 42, 10102],
    ["an array", ["abc"], 10102],
    ["an object", { alias: "abc" }, 10102],
    ["a boolean", true, 10102]
  ]

  it.each(cases)("%s on create", (_, raw, expected) => {
    expect(onCreate("alias", raw, (alias) => checkAlias(alias, "create"))).toEqual(expected === "ok" ? ok(raw) : code(expected))
  })

  it.each(cases)("%s on update", (_, raw, expected) => {
    expect(updateOutcome("/alias", raw, (changes) => changes.alias)).toEqual(expected === "ok" ? ok(raw) : code(10133))
  })

  it("left out or null: none on create (one is generated), 10133 on update", () => {
    for (const raw of [undefined, null]) {
      expect(Either.map(created({ alias: raw }), (draft) => draft.alias)).toEqual(Either.right(undefined))
      expect(updateOutcome("/alias", raw, (changes) => changes.alias)).toEqual(code(10133))
    }
  })

  it("keeps the display case", () => {
    expect(outcome(checkAlias("MyLink", "create"))).toEqual(ok("MyLink"))
  })

  it("includes the required reserved words and the service's own paths", () => {
    const required = ["api", "admin", "static", "healthz", "readyz", "metrics", "docs", "assets"]
    const more = ["favicon.ico", "robots.txt", "login", "logout", "www", "qr"]
    expect(RESERVED_ALIASES).toEqual(expect.arrayContaining([...required, ...more]))
  })

  it.each(RESERVED_ALIASES.flatMap((word) => [word, word.toUpperCase(), mixedCase(word)]))(
    "refuses the reserved %s: 10104 on create, 10133 on update",
    (word) => {
      expect(outcome(checkAlias(word, "create"))).toEqual(code(10104))
      expect(outcome(checkAlias(word, "update"))).toEqual(code(10133))
    }
  )
})

describe("rand_alias_length", () => {
  it.each<readonly [unknown, Outcome]>([
    [undefined, ok(6)],
    [null, ok(6)],
    [4, ok(4)],
    [6, ok(6)],
    [40, ok(40)],
    ["8", ok(8)],
    [3, code(10102)],
    [0, code(10102)],
    [-5, code(10102)],
    [41, code(10102)],
    [8.5, code(10102)],
    ["08", code(10102)],
    ["8.0", code(10102)],
    [" 8", code(10102)],
    ["", code(10102)],
    [Number.NaN, code(10102)],
    [Number.POSITIVE_INFINITY, code(10102)],
    [true, code(10102)],
    [[8], code(10102)]
  ])("%j gives %j", (raw, expected) => {
    expect(onCreate("rand_alias_length", raw, Either.right, ok(6))).toEqual(expected)
  })
})

/** A random source that hands out the given bytes in order, then fails the test. */
const scripted = (bytes: ReadonlyArray<number>) => {
  let next = 0
  return (n: number): Uint8Array => {
    if (next >= bytes.length) throw new Error("script exhausted")
    const chunk = Uint8Array.from(bytes.slice(next, next + n))
    next += n
    return chunk
  }
}

describe("generateAlias", () => {
  it("uses an unambiguous alphabet of 56 distinct characters", () => {
    expect(ALIAS_ALPHABET).toHaveLength(56)
    expect(new Set(ALIAS_ALPHABET).size).toBe(56)
    for (const ambiguous of "0Oo1lI") expect(ALIAS_ALPHABET).not.toContain(ambiguous)
    expect(ALIAS_ALPHABET).toMatch(/^[A-Za-z0-9]+$/)
  })

  it("is 6 characters by default", () => {
    expect(generateAlias()).toHaveLength(6)
  })

  it("has the asked length, from the alphabet only, and passes checkAlias, for every length 4-40", () => {
    for (let length = 4; length <= 40; length++) {
      for (let i = 0; i < 50; i++) {
        const alias = generateAlias(length)
        expect(alias).toHaveLength(length)
        for (const c of alias) expect(ALIAS_ALPHABET).toContain(c)
        expect(outcome(checkAlias(alias, "create"))).toEqual(ok(alias))
      }
    }
  })

  it.each([3, 41, 0, -1, 4.5, Number.NaN])("throws a RangeError for length %s", (length) => {
    expect(() => generateAlias(length)).toThrow(RangeError)
  })

  it("maps bytes 0-223 to alphabet[byte % 56] and drops 224-255, so each character has exactly 4 bytes", () => {
    for (let byte = 0; byte < 256; byte++) {
      const constant = (n: number) => new Uint8Array(n).fill(byte)
      if (byte < 224) expect(generateAlias(4, constant)).toBe(ALIAS_ALPHABET.charAt(byte % 56).repeat(4))
      else expect(() => generateAlias(4, constant)).toThrow(/unusable bytes/)
    }
  })

  it("skips dropped bytes and keeps drawing until the alias is complete", () => {
    const random = scripted([255, 0, 224, 1, 250, 2, 3, 9, 9, 9, 9, 9, 9, 9, 9, 9])
    expect(generateAlias(4, random)).toBe("2345")
  })

  it("never returns a reserved alias", () => {
    const indexes = (word: string) => [...word].map((c) => ALIAS_ALPHABET.indexOf(c))
    // Each draw of 6 asks for 6 + 2 + 1 bytes; the first draw spells "assets".
    const random = scripted([...indexes("assets"), 0, 0, 0, ...indexes("assetz"), 0, 0, 0])
    expect(generateAlias(6, random)).toBe("assetz")
  })

  it("gives 10,000 distinct aliases of length 8, with roughly uniform characters", () => {
    const aliases = Array.from({ length: 10_000 }, () => generateAlias(8))
    expect(new Set(aliases).size).toBe(aliases.length)
    const counts = new Map<string, number>()
    for (const alias of aliases) for (const c of alias) counts.set(c, (counts.get(c) ?? 0) + 1)
    expect(counts.size).toBe(56)
    const expected = (10_000 * 8) / 56
    const chiSquare = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0)
    // 55 degrees of freedom: mean 55; above 125 has a probability below one in a million.
    expect(chiSquare).toBeLessThan(125)
  })
})

describe("checkNotes", () => {
  const cases: ReadonlyArray<readonly [string, unknown, Outcome, Outcome]> = [
    ["absent", undefined, ok(""), ok("")],
    ["null", null, ok(""), ok("")],
    ["empty", "", ok(""), ok("")],
    ["text with line breaks", "line\nbreak\ttab", ok("line\nbreak\ttab"), ok("line\nbreak\ttab")],
    ["exactly 1000", "n".repeat(1000), ok("n".repeat(1000)), ok("n".repeat(1000))],
    ["1000 emoji (code points)", "😀".repeat(1000), ok("😀".repeat(1000)), ok("😀".repeat(1000))],
    ["1001", "n".repeat(1001), code(10106), code(10135)],
    ["1001 emoji", "😀".repeat(1001), code(10106), code(10135)],
    ["a number", 5, code(10105), code(10134)],
    ["a boolean", false, code(10105), code(10134)],
    ["an object", { text: "x" }, code(10105), code(10134)],
    ["an array", ["x"], code(10105), code(10134)],
    ["a NUL character", "a\u0000b", code(10105), code(10134)],
    ["a lone surrogate", "a\uD800b", code(10105), code(10134)]
  ]
  it.each(cases)("%s", (_, raw, onCreateExpected, onUpdate) => {
    expect(onCreate("notes", raw, (notes) => checkNotes(notes, "create"), ok(""))).toEqual(onCreateExpected)
    expect(updateOutcome("/notes", raw, (changes) => changes.notes ?? "")).toEqual(onUpdate)
  })
})

/** Four labels of 61 letters and one of 5, dot-separated: 253 characters. */
const HOST_253 = `${"a".repeat(61)}.`.repeat(4) + "abcde"

describe("checkUrl", () => {
  const base = "https://example.com/"
  const cases: ReadonlyArray<readonly [string, unknown, string | undefined]> = [
    ["https", "https://example.com/a?b=c#d", "https://example.com/a?b=c#d"],
    ["http", "http://example.com", "http://example.com/"],
    ["no scheme", "example.com/path", "http://example.com/path"],
    ["upper-case scheme and host", "HTTPS://EXAMPLE.COM/A", "https://example.com/A"],
    ["IDN host", "https://bücher.de/", "https://xn--bcher-kva.de/"],
    ["exactly 4096", base + "a".repeat(4096 - base.length), base + "a".repeat(4096 - base.length)],
    ["4097", base + "a".repeat(4097 - base.length), undefined],
    ["javascript:", "javascript:alert(1)", undefined],
    ["data:", "data:text/html,<script>alert(1)</script>", undefined],
    ["ftp:", "ftp://example.com/", undefined],
    ["mailto:", "mailto:a@example.com", undefined],
    ["credentials", "https://user:pass@example.com/", undefined],
    ["a user name only", "https://user@example.com/", undefined],
    ["CR LF", "https://example.com/a\r\nSet-Cookie: x", undefined],
    ["a tab", "https://example.com/\ta", undefined],
    ["a space", "https://example.com/a b", undefined],
    ["a leading space", " https://example.com/", undefined],
    ["no host", "https://", undefined],
    ["a 63-character label", `https://${"a".repeat(63)}.example/`, `https://${"a".repeat(63)}.example/`],
    ["a 64-character label", `https://${"a".repeat(64)}.example/`, undefined],
    ["a 300-character label", `https://${"a".repeat(300)}.example/`, undefined],
    ["a 253-character host", `https://${HOST_253}/`, `https://${HOST_253}/`],
    ["a 254-character host", `https://${HOST_253}f/`, undefined],
    ["a 253-character host and its trailing dot", `https://${HOST_253}./`, `https://${HOST_253}./`],
    ["an IDN label over 63 characters as punycode", `https://${"ü".repeat(60)}.example/`, undefined],
    ["empty", "", undefined],
    ["a number", 42, undefined],
    ["null", null, undefined],
    ["undefined", undefined, undefined],
    ["an object", { url: "https://example.com/" }, undefined]
  ]
  it.each(cases)("%s", (_, raw, expected) => {
    expect(Either.match(created({ url: raw }), { onLeft: (error) => code(error.problems[0].code), onRight: (draft) => ok(draft.url) })).toEqual(
      expected === undefined ? code(10100) : ok(expected)
    )
    expect(updateOutcome("/url", raw, (changes) => changes.url)).toEqual(expected === undefined ? code(10132) : ok(expected))
  })
})

describe("redirect_type", () => {
  it.each<readonly [unknown, Outcome]>([
    [undefined, ok(301)],
    [null, ok(301)],
    [301, ok(301)],
    [307, ok(307)],
    ["301", ok(301)],
    ["307", ok(307)],
    [302, code(10115)],
    [308, code(10115)],
    [0, code(10115)],
    ["302", code(10115)],
    [301.5, code(10115)],
    ["301.0", code(10115)],
    [" 301", code(10115)],
    ["0301", code(10115)],
    ["", code(10115)],
    [true, code(10115)],
    [[301], code(10115)],
    [{ type: 301 }, code(10115)]
  ])("%j gives %j", (raw, expected) => {
    expect(onCreate("redirect_type", raw, Either.right, ok(301))).toEqual(expected)
  })
})

describe("notify_on_click", () => {
  it.each<readonly [unknown, boolean]>([
    [undefined, false],
    [null, false],
    [0, false],
    [1, true],
    ["0", false],
    ["1", true],
    [false, false],
    [true, true]
  ])("%j is %s", (raw, expected) => {
    expect(Either.map(created({ notify_on_click: raw }), (draft) => draft.link.notifyOnClick)).toEqual(Either.right(expected))
    if (raw !== undefined && raw !== null) expect(updateOutcome("/notify_on_click", raw, (changes) => changes.notifyOnClick)).toEqual(ok(expected))
  })

  it.each<unknown>([undefined, null])("%j is a value required on update", (raw) => {
    expect(updated("/notify_on_click", raw).problems).toEqual([{ code: 10153, message: "/notify_on_click: must be 0 or 1" }])
  })

  it.each<unknown>([2, -1, 0.5, "2", "yes", "true", "", " 1", [], {}])("%j is 10153 naming the field", (raw) => {
    const problemsOf = (result: ReturnType<typeof created>) => Either.match(result, { onLeft: (error) => error.problems, onRight: () => [] })
    expect(problemsOf(created({ notify_on_click: raw }))).toEqual([{ code: 10153, message: "notify_on_click: must be 0 or 1" }])
    expect(updated("/notify_on_click", raw).problems).toEqual([{ code: 10153, message: "/notify_on_click: must be 0 or 1" }])
  })
})

describe("checkScheduleDate", () => {
  const absolute = { relativeDays: false }
  const relative = { relativeDays: true }
  // [name, raw, options, expected]: "invalid", "past", or the timestamp
  const cases: ReadonlyArray<readonly [string, unknown, { relativeDays: boolean }, "invalid" | "past" | number | null]> = [
    ["absent", undefined, absolute, null],
    ["null (clear)", null, absolute, null],
    ["now + 1", NOW + 1, absolute, NOW + 1],
    ["now + 1 as a string", String(NOW + 1), absolute, NOW + 1],
    ["now", NOW, absolute, "past"],
    ["now as a string", String(NOW), absolute, "past"],
    ["the past", NOW - 1, absolute, "past"],
    ["zero", 0, absolute, "past"],
    ["the last second of 9999", MAX_TIMESTAMP, absolute, MAX_TIMESTAMP],
    ["year 10000", MAX_TIMESTAMP + 1, absolute, "invalid"],
    ["milliseconds", NOW * 1000, absolute, "invalid"],
    ["a non-safe integer", 2 ** 53, absolute, "invalid"],
    ["MAX_SAFE_INTEGER", Number.MAX_SAFE_INTEGER, absolute, "invalid"],
    ["-1", -1, absolute, "invalid"],
    ["-1 as a string", "-1", absolute, "invalid"],
    ["1.5", 1.5, absolute, "invalid"],
    ["'1.5'", "1.5", absolute, "invalid"],
    ["a float in the future", NOW + 0.5, absolute, "invalid"],
    ["'123abc'", "123abc", absolute, "invalid"],
    ["leading zeros", `0${NOW + 1}`, absolute, "invalid"],
    ["surrounding spaces", ` ${NOW + 1} `, absolute, "invalid"],
    ["exponent notation", "1.8e9", absolute, "invalid"],
    ["an ISO date", "2030-01-01T00:00:00Z", absolute, "invalid"],
    ["empty", "", absolute, "invalid"],
    ["NaN", Number.NaN, absolute, "invalid"],
    ["Infinity", Number.POSITIVE_INFINITY, absolute, "invalid"],
    ["a boolean", true, absolute, "invalid"],
    ["an array", [NOW + 1], absolute, "invalid"],
    ["an object", { at: NOW + 1 }, absolute, "invalid"],
    ["'1d' without relative days", "1d", absolute, "invalid"],
    ["'1d' with relative days", "1d", relative, NOW + DAY],
    ["'30d' with relative days", "30d", relative, NOW + 30 * DAY],
    ["'-1d' with relative days", "-1d", relative, "past"],
    ["'-1d' without relative days", "-1d", absolute, "invalid"],
    ["'-100000d' (six digits: no day offset)", "-100000d", relative, "invalid"],
    ["'0d'", "0d", relative, "past"],
    ["'-0d'", "-0d", relative, "past"],
    ["'9999999d' (beyond 9999)", "9999999d", relative, "invalid"],
    ["'1D'", "1D", relative, "invalid"],
    ["'+1d'", "+1d", relative, "invalid"],
    ["'1.5d'", "1.5d", relative, "invalid"],
    ["'d'", "d", relative, "invalid"],
    ["a timestamp with relative days", NOW + 1, relative, NOW + 1],
    ["a timestamp string with relative days", String(NOW + 1), relative, NOW + 1]
  ]
  const expectedFor = (expected: (typeof cases)[number][3], invalid: number, past: number): Outcome =>
    expected === "invalid" ? code(invalid) : expected === "past" ? code(past) : ok(expected)

  // Relative days are version 3's: its adapter turns a day offset into the timestamp version 4 reads.
  const sent = (raw: unknown, options: { relativeDays: boolean }) =>
    options.relativeDays && typeof raw === "string" ? (timestampOfDayOffset(raw, NOW) ?? raw) : raw

  it.each(cases)("%s", (_, raw, options, expected) => {
    const value = sent(raw, options)
    for (const [field, invalid, past] of [["delete_on", 10111, 10112], ["archive_on", 10113, 10114]] as const) {
      expect(onCreate(field, value, (at) => checkScheduleDate(at, field, NOW), ok(null))).toEqual(expectedFor(expected, invalid, past))
      expect(updateOutcome(`/${field}`, value, (changes) => (field === "delete_on" ? changes.deleteOn : changes.archiveOn))).toEqual(
        expectedFor(expected, invalid, past)
      )
    }
  })
})

describe("checkScheduleExclusive", () => {
  it.each<readonly [number | null, number | null, Outcome]>([
    [null, null, ok({ archiveOn: null, deleteOn: null })],
    [NOW + 1, null, ok({ archiveOn: NOW + 1, deleteOn: null })],
    [null, NOW + 1, ok({ archiveOn: null, deleteOn: NOW + 1 })],
    [NOW + 1, NOW + 2, code(10116)]
  ])("archive_on %j, delete_on %j", (archiveOn, deleteOn, expected) => {
    expect(outcome(checkScheduleExclusive(archiveOn, deleteOn))).toEqual(expected)
  })
})

describe("utm_template_id", () => {
  it.each<readonly [unknown, Outcome]>([
    [undefined, ok(null)],
    [null, ok(null)],
    [1, ok(1)],
    ["12", ok(12)],
    [Number.MAX_SAFE_INTEGER, ok(Number.MAX_SAFE_INTEGER)],
    [0, code(10108)],
    [-1, code(10108)],
    [1.5, code(10108)],
    [2 ** 53, code(10108)],
    ["abc", code(10108)],
    ["", code(10108)],
    ["012", code(10108)],
    [true, code(10108)],
    [{ id: 1 }, code(10108)]
  ])("%j gives %j", (raw, expected) => {
    expect(onCreate("utm_template_id", raw, Either.right, ok(null))).toEqual(expected)
  })
})

describe("UTM fields and redirect_url", () => {
  const field = (field_code: string, required: boolean) => ({ label: field_code, field_code, type: "text", required })
  const template: UtmTemplateFields = {
    fields: [field("utm_source", true), field("utm_medium", false), field("utm_campaign", true)]
  }
  const optionalOnly: UtmTemplateFields = { fields: [field("utm_term", false)] }
  const url = "https://example.com/p"
  const both = { utm_source: "s", utm_campaign: "c" }

  const cases: ReadonlyArray<readonly [string, string, UtmTemplateFields | undefined, unknown, Outcome]> = [
    ["no template, no fields", url, undefined, undefined, ok(url)],
    ["no template, null fields", url, undefined, null, ok(url)],
    ["no template, an empty object", url, undefined, {}, ok(url)],
    ["no template but fields", url, undefined, { utm_source: "s" }, code(10110)],
    ["template field order, not input order", url, template, { utm_campaign: "c", utm_source: "s" }, ok(`${url}?utm_source=s&utm_campaign=c`)],
    ["all three fields", url, template, { utm_medium: "m", utm_campaign: "c", utm_source: "s" }, ok(`${url}?utm_source=s&utm_medium=m&utm_campaign=c`)],
    ["spaces as +", url, template, { utm_source: "news letter", utm_campaign: "c" }, ok(`${url}?utm_source=news+letter&utm_campaign=c`)],
    ["unicode as UTF-8", url, template, { utm_source: "été 😀", utm_campaign: "c" }, ok(`${url}?utm_source=%C3%A9t%C3%A9+%F0%9F%98%80&utm_campaign=c`)],
    ["reserved characters encoded", url, template, { utm_source: "a&b=c+d#e?f", utm_campaign: "%" }, ok(`${url}?utm_source=a%26b%3Dc%2Bd%23e%3Ff&utm_campaign=%25`)],
    ["values trimmed", url, template, { utm_source: "  s ", utm_campaign: "c" }, ok(`${url}?utm_source=s&utm_campaign=c`)],
    ["a blank optional field left out", url, template, { ...both, utm_medium: "  " }, ok(`${url}?utm_source=s&utm_campaign=c`)],
    ["before the fragment", `${url}#top`, template, both, ok(`${url}?utm_source=s&utm_campaign=c#top`)],
    ["after the existing query, before the fragment", `${url}?a=1&b=2#top`, template, both, ok(`${url}?a=1&b=2&utm_source=s&utm_campaign=c#top`)],
    ["the template value replaces the URL's", `${url}?utm_source=old&a=1&utm_source=older`, template, both, ok(`${url}?a=1&utm_source=s&utm_campaign=c`)],
    ["an encoded existing key is replaced too", `${url}?utm%5Fsource=old`, template, both, ok(`${url}?utm_source=s&utm_campaign=c`)],
    ["the URL's other parameters kept as written", `${url}?q=a%20b&flag&x=%7E`, template, both, ok(`${url}?q=a%20b&flag&x=%7E&utm_source=s&utm_campaign=c`)],
    ["a field not given leaves the URL's parameter", `${url}?utm_medium=keep`, template, both, ok(`${url}?utm_medium=keep&utm_source=s&utm_campaign=c`)],
    ["an empty query", `${url}?`, template, both, ok(`${url}?utm_source=s&utm_campaign=c`)],
    ["a template of optional fields, none given", url, optionalOnly, undefined, ok(url)],
    ["a template of optional fields, one given", url, optionalOnly, { utm_term: "t" }, ok(`${url}?utm_term=t`)],
    ["200 characters", url, optionalOnly, { utm_term: "x".repeat(200) }, ok(`${url}?utm_term=${"x".repeat(200)}`)],
    ["201 characters", url, optionalOnly, { utm_term: "x".repeat(201) }, code(10110)],
    ["a required field missing", url, template, { utm_source: "s" }, code(10110)],
    ["a required field empty", url, template, { utm_source: "s", utm_campaign: "" }, code(10110)],
    ["a required field blank", url, template, { utm_source: "s", utm_campaign: " \u00a0 " }, code(10110)],
    ["no fields for required ones", url, template, undefined, code(10110)],
    ["an unknown key", url, template, { ...both, utm_other: "x" }, code(10110)],
    ["a __proto__ key", url, template, JSON.parse('{"utm_source":"s","utm_campaign":"c","__proto__":"x"}'), code(10110)],
    ["a number value", url, template, { utm_source: 5, utm_campaign: "c" }, code(10110)],
    ["a null value", url, template, { ...both, utm_medium: null }, code(10110)],
    ["an object value", url, template, { utm_source: { v: "s" }, utm_campaign: "c" }, code(10110)],
    ["a control character", url, template, { utm_source: "a\nb", utm_campaign: "c" }, code(10110)],
    ["a lone surrogate", url, template, { utm_source: "a\uDC00", utm_campaign: "c" }, code(10110)],
    ["an array", url, template, ["s", "c"], code(10110)],
    ["a string", url, template, "utm_source=s", code(10110)],
    ["a Map", url, template, new Map([["utm_source", "s"]]), code(10110)],
    ["not a URL", "not a url", template, both, code(10100)]
  ]
  it.each(cases)("%s", (_, input, tpl, fields, expected) => {
    expect(onCreate("utm_fields", fields, (given) => buildRedirectUrl(input, tpl, given), outcome(buildRedirectUrl(input, tpl, {})))).toEqual(expected)
  })

  it("refuses a redirect URL over 8000 characters", () => {
    const long = `https://example.com/${"a".repeat(4000)}`
    const value = "😀".repeat(200) // 12 characters each once encoded
    expect(outcome(buildRedirectUrl(long, template, { utm_source: value, utm_campaign: "c" }))).toEqual(ok(expect.any(String)))
    expect(outcome(buildRedirectUrl(long, template, { utm_source: value, utm_campaign: value }))).toEqual(code(10110))
  })

  it("checkUtmFields gives the cleaned values in template order", () => {
    expect(outcome(checkUtmFields(template, { utm_campaign: " c ", utm_medium: "", utm_source: "s" }))).toEqual(
      ok([
        ["utm_source", "s"],
        ["utm_campaign", "c"]
      ])
    )
  })

  it("appendUtmValues without values returns the URL untouched", () => {
    expect(outcome(appendUtmValues("https://example.com/?a=%7e", []))).toEqual(ok("https://example.com/?a=%7e"))
  })
})

describe("checkTags", () => {
  const tag = (name: string, shared = false) => ({ name, shared })
  const cases: ReadonlyArray<readonly [string, unknown, Outcome]> = [
    ["absent", undefined, ok([])],
    ["null", null, ok([])],
    ["empty", [], ok([])],
    ["a name, shared absent", [{ name: "news" }], ok([tag("news")])],
    ["shared true", [{ name: "news", shared: true }], ok([tag("news", true)])],
    ["shared null", [{ name: "news", shared: null }], ok([tag("news")])],
    ["trimmed", [{ name: "  news\u00a0" }], ok([tag("news")])],
    ["unicode", [{ name: "日本語 😀" }], ok([tag("日本語 😀")])],
    ["50 characters", [{ name: "t".repeat(50) }], ok([tag("t".repeat(50))])],
    ["50 characters once trimmed", [{ name: ` ${"t".repeat(50)} ` }], ok([tag("t".repeat(50))])],
    ["50 emoji", [{ name: "😀".repeat(50) }], ok([tag("😀".repeat(50))])],
    ["other properties ignored", [{ name: "news", notes: "x", id: 3 }], ok([tag("news")])],
    [
      "duplicates ignoring case merged, the first wins",
      [{ name: "News", shared: true }, { name: "news" }, { name: " NEWS " }, { name: "sport" }],
      ok([tag("News", true), tag("sport")])
    ],
    ["20 tags", Array.from({ length: 20 }, (_, i) => ({ name: `t${i}` })), ok(Array.from({ length: 20 }, (_, i) => tag(`t${i}`)))],
    ["21 tags", Array.from({ length: 21 }, (_, i) => ({ name: `t${i}` })), code(10107)],
    ["21 entries of one tag", Array.from({ length: 21 }, () => ({ name: "same" })), code(10107)],
    ["51 characters", [{ name: "t".repeat(51) }], code(10107)],
    ["an empty name", [{ name: "" }], code(10107)],
    ["a blank name", [{ name: "   " }], code(10107)],
    ["no name", [{ shared: true }], code(10107)],
    ["a number name", [{ name: 5 }], code(10107)],
    ["a line break", [{ name: "a\nb" }], code(10107)],
    ["a control character", [{ name: "a\u0007b" }], code(10107)],
    ["a lone surrogate", [{ name: "a\uD800" }], code(10107)],
    ["shared as a string", [{ name: "news", shared: "true" }], code(10107)],
    ["shared as 1", [{ name: "news", shared: 1 }], code(10107)],
    ["a string entry", ["news"], code(10107)],
    ["a null entry", [null], code(10107)],
    ["an array entry", [["news"]], code(10107)],
    ["one bad entry among good ones", [{ name: "a" }, { name: "" }], code(10107)],
    ["a string", "news", code(10107)],
    ["an object", { name: "news" }, code(10107)],
    ["a number", 3, code(10107)]
  ]
  it.each(cases)("%s", (_, raw, expected) => {
    expect(onCreate("tags", raw, checkTags, ok([]))).toEqual(expected)
  })
})

describe("every field, for any input", () => {
  const anyInput: fc.Arbitrary<unknown> = fc.oneof(
    fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withTypedArray: true,
      withSparseArray: true,
      stringUnit: "binary"
    }),
    fc.string({ unit: "binary" }),
    fc.stringMatching(/^-?[0-9]{1,14}d?$/),
    fc.stringMatching(/^[A-Za-z0-9._~%-]{0,45}$/),
    fc.integer(),
    fc.double(),
    fc.constantFrom(0, 1, 301, 307, -0, "0", "1", "301", ".", "..", "API", NOW, NOW + 1, MAX_TIMESTAMP + 1),
    fc.array(fc.record({ name: fc.oneof(fc.string(), fc.anything()), shared: fc.anything() }, { requiredKeys: [] }), {
      maxLength: 25
    }),
    fc.dictionary(fc.constantFrom("utm_source", "utm_medium", "utm_campaign", "other"), fc.oneof(fc.string(), fc.anything()))
  )
  const template: UtmTemplateFields = {
    fields: [
      { field_code: "utm_source", required: true },
      { field_code: "utm_medium", required: false }
    ]
  }
  /** A field of E4 (read with a valid url) or the value of an E12 operation, and the codes its problems may have. */
  const problemsOf = (result: ReturnType<typeof created>): Problems => Either.match(result, { onLeft: (error) => error.problems, onRight: () => [] })
  type Problems = ReadonlyArray<{ readonly code: number; readonly message: string }>
  const fields: ReadonlyArray<readonly [string, (raw: unknown) => Problems, ReadonlyArray<number>]> = [
    ["alias on create", (raw) => problemsOf(created({ alias: raw })), [10102, 10103, 10104]],
    ["notes on create", (raw) => problemsOf(created({ notes: raw })), [10105, 10106]],
    ["url on create", (raw) => problemsOf(created({ url: raw })), [10100]],
    ["notify_on_click on create", (raw) => problemsOf(created({ notify_on_click: raw })), [10153]],
    ["rand_alias_length", (raw) => problemsOf(created({ rand_alias_length: raw })), [10102]],
    ["redirect_type", (raw) => problemsOf(created({ redirect_type: raw })), [10115]],
    ["utm_template_id (none found)", (raw) => problemsOf(created({ utm_template_id: raw })), [10108, 10109]],
    ["tags", (raw) => problemsOf(created({ tags: raw })), [10107]],
    ["delete_on on create", (raw) => problemsOf(created({ delete_on: raw })), [10111, 10112]],
    ["archive_on on create", (raw) => problemsOf(created({ archive_on: raw })), [10113, 10114]],
    ["utm_fields with a template", (raw) => problemsOf(created({ utm_template_id: 1, utm_fields: raw }, template)), [10110]],
    ["utm_fields without a template", (raw) => problemsOf(created({ utm_fields: raw })), [10110]],
    ["any url with UTM values", (raw) => problemsOf(created({ url: raw, utm_template_id: 1, utm_fields: { utm_source: "s" } }, template)), [10100, 10110]],
    ["/alias", (raw) => updated("/alias", raw).problems, [10133]],
    ["/notes", (raw) => updated("/notes", raw).problems, [10134, 10135]],
    ["/url", (raw) => updated("/url", raw).problems, [10132]],
    ["/notify_on_click", (raw) => updated("/notify_on_click", raw).problems, [10153]],
    ["/delete_on", (raw) => updated("/delete_on", raw).problems, [10111, 10112]],
    ["/archive_on", (raw) => updated("/archive_on", raw).problems, [10113, 10114]]
  ]

  it.each(fields)("%s: decoded and read, a value or problems of its documented codes, never a throw", (_, read, codes) => {
    fc.assert(
      fc.property(anyInput, (raw) => {
        for (const item of read(raw)) {
          expect(typeof item.message).toBe("string")
          expect(codes).toContain(item.code)
        }
      }),
      { numRuns: 500 }
    )
  })

  it("accepted aliases are 1-40 allowed characters and not reserved", () => {
    fc.assert(
      fc.property(anyInput, (raw) => {
        const result = Either.map(created({ alias: raw }), (draft) => draft.alias)
        if (Either.isRight(result) && result.right !== undefined) {
          expect(result.right).toMatch(/^[A-Za-z0-9._-]{1,40}$/)
          expect(RESERVED_ALIASES).not.toContain(result.right.toLowerCase())
        }
      }),
      { numRuns: 1000 }
    )
  })

  it("accepted dates are whole seconds after now, up to year 9999", () => {
    fc.assert(
      fc.property(anyInput, fc.boolean(), (raw, relativeDays) => {
        const sent = relativeDays && typeof raw === "string" ? (timestampOfDayOffset(raw, NOW) ?? raw) : raw
        const result = Either.map(created({ delete_on: sent }), (draft) => draft.link.deleteOn)
        if (Either.isRight(result) && result.right !== null) {
          expect(Number.isSafeInteger(result.right)).toBe(true)
          expect(result.right).toBeGreaterThan(NOW)
          expect(result.right).toBeLessThanOrEqual(MAX_TIMESTAMP)
        }
      }),
      { numRuns: 1000 }
    )
  })
})
