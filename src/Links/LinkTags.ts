import { Either } from "effect"
import { type InputProblem, problem } from "./LinkErrors.ts"
import { codePointLength, hasControlCharacter, hasLoneSurrogate, isAbsent, isPlainObject } from "./InputValues.ts"

export const MAX_LINK_TAGS = 20
export const MAX_TAG_NAME_LENGTH = 50

export interface TagInput {
  readonly name: string
  readonly shared: boolean
}

/** A tag name as stored: trimmed, 1-50 characters, no control characters; undefined otherwise. */
export const tagNameOf = (raw: unknown): string | undefined => {
  if (typeof raw !== "string") return undefined
  const name = raw.trim()
  const length = codePointLength(name)
  if (length === 0 || length > MAX_TAG_NAME_LENGTH || hasControlCharacter(name) || hasLoneSurrogate(name)) return undefined
  return name
}

const tagOf = (raw: unknown): TagInput | undefined => {
  if (!isPlainObject(raw)) return undefined
  const name = tagNameOf(raw.name)
  if (name === undefined) return undefined
  const shared = isAbsent(raw.shared) ? false : raw.shared
  return typeof shared === "boolean" ? { name, shared } : undefined
}

/**
 * `tags` on create: at most 20 entries `{name, shared}`, the name trimmed to 1-50 characters without
 * control characters, `shared` a boolean (false when absent). Other properties are ignored. Names
 * equal ignoring case are one tag: the first entry wins. Absent gives []; anything wrong: 10107.
 */
export const checkTags = (raw: unknown): Either.Either<ReadonlyArray<TagInput>, InputProblem> => {
  if (isAbsent(raw)) return Either.right([])
  const invalid = Either.left(problem(10107))
  if (!Array.isArray(raw) || raw.length > MAX_LINK_TAGS) return invalid
  const tags = new Map<string, TagInput>()
  for (const entry of raw) {
    const tag = tagOf(entry)
    if (tag === undefined) return invalid
    const key = tag.name.toLowerCase()
    if (!tags.has(key)) tags.set(key, tag)
  }
  return Either.right([...tags.values()])
}
