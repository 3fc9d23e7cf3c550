/** Where a link field comes from: E4 (create) or an E12 operation (update); they report different codes. */
export type LinkInputContext = "create" | "update"

/** An integer field's canonical decimal string: "301", not "0301", " 301", "301.0" or "3e2". */
export const DECIMAL = /^-?(?:0|[1-9][0-9]{0,15})$/

/** Length as a person counts it: an emoji is one character, not two UTF-16 units. */
export const codePointLength = (text: string): number => {
  let length = 0
  for (const _ of text) length++
  return length
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Text that cannot be encoded as UTF-8 (it would be stored or sent as U+FFFD instead). */
export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text)

export const hasControlCharacter = (text: string): boolean => /\p{Cc}/u.test(text)

/** A JSON object (not an array, not a class instance). */
export const isPlainObject = (raw: unknown): raw is Readonly<Record<string, unknown>> => {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return false
  const prototype: unknown = Object.getPrototypeOf(raw)
  return prototype === Object.prototype || prototype === null
}
