/** What a page says of itself in its tags. */
export interface HeadTags {
  /** `<meta>` contents by their `property` (else `name`), lower-cased; the first of each. */
  readonly meta: ReadonlyMap<string, string>
  /** The text of the first `<title>` that is closed. */
  readonly title: string | undefined
}

interface Tag {
  readonly name: string
  /** The attributes asked for that it has, by their lower-case names; the first of each. */
  readonly attributes: ReadonlyMap<string, string>
  /** Just after its `>`. */
  readonly end: number
}

const TAB = 0x09
const LF = 0x0a
const FF = 0x0c
const CR = 0x0d
const SPACE = 0x20
const BANG = 0x21
const DOUBLE_QUOTE = 0x22
const SINGLE_QUOTE = 0x27
const SLASH = 0x2f
const EQUALS = 0x3d
const GT = 0x3e
const QUESTION = 0x3f

const META_ATTRIBUTES = ["property", "name", "content"]
/** The longest tag name looked for: `textarea`. */
const LONGEST_NAME = 8
/** Elements whose text is not markup (a `<meta` in a script's string is no tag), up to their end tag. */
const RAW_TEXT = new Set(["script", "style", "textarea", "title"])

const isSpace = (code: number) => code === SPACE || code === TAB || code === LF || code === FF || code === CR
const isLetter = (code: number) => (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)
const lowerAscii = (code: number) => (code >= 0x41 && code <= 0x5a ? code + 0x20 : code)
/** Where a tag's name or an unquoted value ends, as HTML's tokenizer says. */
const endsName = (code: number) => isSpace(code) || code === SLASH || code === GT

/** Whether `html` holds `word` (lower-case ASCII) at `at`, in any case. */
const hasWordAt = (html: string, word: string, at: number) => {
  if (at + word.length > html.length) return false
  for (let k = 0; k < word.length; k++) if (lowerAscii(html.charCodeAt(at + k)) !== word.charCodeAt(k)) return false
  return true
}

/** The `<` of the end tag `</name` closing raw text that starts at `from`; -1 when there is none. */
const rawTextEnd = (html: string, name: string, from: number) => {
  for (let at = html.indexOf("</", from); at !== -1; at = html.indexOf("</", at + 2)) {
    const after = at + 2 + name.length
    if (after < html.length && hasWordAt(html, name, at + 2) && endsName(html.charCodeAt(after))) return at
  }
  return -1
}

/**
 * The tag whose name starts at `from` and those of its attributes its name wants, read as HTML
 * reads them (any order; values double-, single- or unquoted); undefined when the page ends inside
 * it. Each character is read once.
 */
const readTag = (html: string, from: number, wantedOf: (name: string) => ReadonlyArray<string>): Tag | undefined => {
  const length = html.length
  let at = from
  while (at < length && !endsName(html.charCodeAt(at))) at++
  // Longer names than any looked for are not kept: a crafted one may be the whole page.
  const name = at - from <= LONGEST_NAME ? html.slice(from, at).toLowerCase() : ""
  const wanted = wantedOf(name)
  const attributes = new Map<string, string>()
  for (;;) {
    while (at < length && (isSpace(html.charCodeAt(at)) || html.charCodeAt(at) === SLASH)) at++
    if (at >= length) return undefined
    if (html.charCodeAt(at) === GT) return { name, attributes, end: at + 1 }
    const nameStart = at
    // An `=` first belongs to the name, as in HTML.
    at++
    while (at < length && !endsName(html.charCodeAt(at)) && html.charCodeAt(at) !== EQUALS) at++
    const nameEnd = at
    while (at < length && isSpace(html.charCodeAt(at))) at++
    let value = ""
    if (html.charCodeAt(at) === EQUALS) {
      at++
      while (at < length && isSpace(html.charCodeAt(at))) at++
      const quote = html.charCodeAt(at)
      if (quote === DOUBLE_QUOTE || quote === SINGLE_QUOTE) {
        const close = html.indexOf(quote === DOUBLE_QUOTE ? '"' : "'", at + 1)
        if (close === -1) return undefined
        value = html.slice(at + 1, close)
        at = close + 1
      } else {
        const valueStart = at
        while (at < length && !isSpace(html.charCodeAt(at)) && html.charCodeAt(at) !== GT) at++
        value = html.slice(valueStart, at)
      }
    }
    for (const word of wanted) {
      if (word.length === nameEnd - nameStart && hasWordAt(html, word, nameStart) && !attributes.has(word)) attributes.set(word, value)
    }
  }
}

/**
 * The `<meta>` tags and the first `<title>` of a page, in one pass that never goes back: comments,
 * doctypes and the text of scripts and styles are skipped, names are matched in any case, and a tag,
 * quote or comment the page leaves open ends the scan (HTML reads the rest as part of it).
 */
export const headTags = (html: string): HeadTags => {
  const meta = new Map<string, string>()
  let title: string | undefined
  let at = 0
  for (;;) {
    const open = html.indexOf("<", at)
    if (open === -1) break
    const next = html.charCodeAt(open + 1)
    if (next === BANG && html.startsWith("<!--", open)) {
      // From open + 2, so that `<!-->` and `<!--->` end where they start, as in HTML.
      const end = html.indexOf("-->", open + 2)
      if (end === -1) break
      at = end + 3
    } else if (next === SLASH && isLetter(html.charCodeAt(open + 2))) {
      const tag = readTag(html, open + 2, () => [])
      if (tag === undefined) break
      at = tag.end
    } else if (next === BANG || next === SLASH || next === QUESTION) {
      // A doctype, `<?xml …?>`, CDATA or `</…`: a bogus comment up to the next `>`.
      const end = html.indexOf(">", open + 2)
      if (end === -1) break
      at = end + 1
    } else if (isLetter(next)) {
      const tag = readTag(html, open + 1, (name) => (name === "meta" ? META_ATTRIBUTES : []))
      if (tag === undefined) break
      at = tag.end
      if (tag.name === "meta") {
        const key = (tag.attributes.get("property") ?? tag.attributes.get("name") ?? "").toLowerCase()
        const content = tag.attributes.get("content")
        if (key !== "" && content !== undefined && !meta.has(key)) meta.set(key, content)
      } else if (RAW_TEXT.has(tag.name)) {
        const close = rawTextEnd(html, tag.name, at)
        if (close === -1) break
        if (tag.name === "title" && title === undefined) title = html.slice(at, close)
        at = close
      }
    } else at = open + 1
  }
  return { meta, title }
}
