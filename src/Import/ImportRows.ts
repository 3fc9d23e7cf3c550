import { Either } from "effect"
import { checkAlias, checkNotes, checkUrl, MAX_LINK_TAGS, MAX_NOTES_LENGTH, tagNameOf } from "../Links/LinkRules.ts"
import { parseClicks, parseCreated } from "./ImportValues.ts"
import type { SourceRow } from "./Sources.ts"

/** A row that passed the link rules: what is inserted. */
export interface ImportLink {
  readonly line: number
  /** Undefined: the source has none, one is generated. */
  readonly alias: string | undefined
  readonly url: string
  readonly notes: string
  /** Names, unique ignoring case (the first spelling kept). */
  readonly tags: ReadonlyArray<string>
  /** Unix seconds; undefined: the time of the import. */
  readonly created: number | undefined
  readonly clicks: number
}

const ALIAS_REASONS = {
  10102: "the alias may hold only letters, digits, '.', '_' and '-'",
  10103: "the alias is longer than 40 characters",
  10104: "the alias is reserved"
} as const

const aliasReason = (code: number) => (code === 10103 || code === 10104 ? ALIAS_REASONS[code] : ALIAS_REASONS[10102])

/** The link's notes: the source's title, then its notes, one line each. */
const notesOf = (row: SourceRow) => [row.title, row.notes].filter((part) => part !== undefined).join("\n")

/**
 * A source row read against the rules of E4 (`LinkRules.ts`): the link to insert, or why not (the
 * first rule it breaks). `now` is Unix seconds: a creation date after it is refused.
 */
export const readImportRow = (row: SourceRow, now: number): Either.Either<ImportLink, string> => {
  if (row.problem !== undefined) return Either.left(row.problem)
  if (row.url === undefined) return Either.left("no long URL")
  const url = checkUrl(row.url, "create")
  if (Either.isLeft(url)) return Either.left("the long URL is not a full http(s) URL with a valid host")
  const alias = row.alias === undefined ? undefined : checkAlias(row.alias, "create")
  if (alias !== undefined && Either.isLeft(alias)) return Either.left(aliasReason(alias.left.code))
  const notes = checkNotes(notesOf(row), "create")
  if (Either.isLeft(notes)) {
    return Either.left(notes.left.code === 10106 ? `the title and notes are longer than ${MAX_NOTES_LENGTH} characters` : "the title or notes are not text")
  }
  const tags = new Map<string, string>()
  for (const given of row.tags) {
    const name = tagNameOf(given)
    if (name === undefined) return Either.left("a tag name is empty, longer than 50 characters or holds control characters")
    if (!tags.has(name.toLowerCase())) tags.set(name.toLowerCase(), name)
  }
  if (tags.size > MAX_LINK_TAGS) return Either.left(`more than ${MAX_LINK_TAGS} tags`)
  const created = row.created === undefined ? undefined : parseCreated(row.created)
  if (row.created !== undefined && created === undefined) return Either.left(`the creation date "${String(row.created)}" is not a date`)
  if (created !== undefined && created > now) return Either.left("the creation date is in the future")
  const clicks = row.clicks === undefined ? 0 : parseClicks(row.clicks)
  if (clicks === undefined) return Either.left(`the click count "${String(row.clicks)}" is not a whole number from 0`)
  return Either.right({
    line: row.line,
    alias: alias === undefined ? undefined : alias.right,
    url: url.right,
    notes: notes.right,
    tags: [...tags.values()],
    created,
    clicks
  })
}
