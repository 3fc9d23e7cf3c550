import { Either } from "effect"
import { type InputProblem, problem } from "./LinkErrors.ts"
import { codePointLength, hasControlCharacter, hasLoneSurrogate } from "./InputValues.ts"

export const MAX_LINK_TAGS = 20
export const MAX_TAG_NAME_LENGTH = 50

export interface TagInput {
  readonly name: string
  readonly shared: boolean
}

/** A tag as E4's `tags` decodes it: `shared` left out or null means false. */
export interface GivenTag {
  readonly name: string
  readonly shared?: boolean | null | undefined
}

/** A tag name as stored: trimmed, 1-50 characters, no control characters; undefined otherwise. */
export const tagNameOf = (text: string): string | undefined => {
  const name = text.trim()
  const length = codePointLength(name)
  if (length === 0 || length > MAX_TAG_NAME_LENGTH || hasControlCharacter(name) || hasLoneSurrogate(name)) return undefined
  return name
}

/**
 * `tags` on create (at most 20 entries, which the schema checks): each name trimmed to 1-50
 * characters without control characters, else 10107. Names equal ignoring case are one tag: the
 * first entry wins.
 */
export const checkTags = (given: ReadonlyArray<GivenTag>): Either.Either<ReadonlyArray<TagInput>, InputProblem> => {
  const tags = new Map<string, TagInput>()
  for (const entry of given) {
    const name = tagNameOf(entry.name)
    if (name === undefined) return Either.left(problem(10107))
    const key = name.toLowerCase()
    if (!tags.has(key)) tags.set(key, { name, shared: entry.shared ?? false })
  }
  return Either.right([...tags.values()])
}
