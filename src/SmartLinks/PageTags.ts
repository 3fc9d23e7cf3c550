import { type HeadTags, headTags } from "./HtmlScanner.ts"

/** How much of a destination page is read for its preview tags: they belong in its head. */
export const PAGE_TAG_BYTES = 256 * 1024
/** Longer values are cut: a preview card shows far less. */
const MAX_VALUE = 1000

export interface PageTags {
  readonly title: string | null
  readonly description: string | null
  readonly image: string | null
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" }

// Bounded repetitions only: each `&` is looked at for at most ten characters, so the pass is linear.
const decodeEntities = (text: string) =>
  text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,6});/gi, (whole, name: string) => {
    if (name.startsWith("#")) {
      const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10)
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return ENTITIES[name.toLowerCase()] ?? whole
  })

const clean = (text: string | undefined) => {
  if (text === undefined) return null
  const value = decodeEntities(text).replace(/\s+/g, " ").trim().slice(0, MAX_VALUE)
  return value === "" ? null : value
}

/** An absolute http(s) URL for an image, resolved against the page's address. */
const imageUrl = (raw: string | null, page: string) => {
  if (raw === null) return null
  try {
    const url = new URL(raw, page)
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null
  } catch {
    return null
  }
}

const tagsOf = ({ meta, title }: HeadTags, pageUrl: string): PageTags => ({
  title: clean(meta.get("og:title") ?? meta.get("twitter:title") ?? title),
  description: clean(meta.get("og:description") ?? meta.get("twitter:description") ?? meta.get("description")),
  image: imageUrl(clean(meta.get("og:image") ?? meta.get("twitter:image")), pageUrl)
})

/**
 * A page's own preview tags: `og:title|description|image`, else `twitter:*`, else its `<title>` and
 * `<meta name="description">`. Undefined when it has none of them. Time linear in the page.
 */
export const pageTags = (html: string, pageUrl: string): PageTags | undefined => {
  const tags = tagsOf(headTags(html), pageUrl)
  return tags.title === null && tags.description === null && tags.image === null ? undefined : tags
}
