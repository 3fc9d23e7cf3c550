import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { watchThreadTime } from "../src/Platform/ThreadTime.ts"
import { PAGE_TAG_BYTES, pageTags } from "../src/SmartLinks/PageTags.ts"
import { pageTagThread } from "../src/SmartLinks/PageTagThread.ts"

const PAGE = "https://dest.example/page"
/** A read of PAGE_TAG_BYTES takes 1-5 ms of CPU; the regular expressions took 12-37 s. */
const BOUND_MS = 100

/** `head`, then `unit` repeated to `bytes` in all, decoded from bytes as the fetch hands a page over. */
const crafted = (head: string, unit: string, bytes = PAGE_TAG_BYTES) =>
  Buffer.from(head + unit.repeat(Math.ceil(bytes / unit.length))).subarray(0, bytes).toString("utf8")

/**
 * The page's tags and the ms of this thread's CPU that reading them took (wall time where the OS does
 * not tell): on a shared machine the thread may wait for a core far longer than it runs.
 */
const timed = (html: string) => {
  const clock = watchThreadTime()
  clock.take()
  const started = performance.now()
  const tags = pageTags(html, PAGE)
  const cpu = clock.take()?.cpu
  return { tags, ms: cpu === undefined ? performance.now() - started : cpu * 1000 }
}

describe("a destination page's tags, read in one pass", () => {
  // The review's pages (#43): a tag that never closes, repeated, after tags that do.
  it.each([
    { unit: "<meta a", head: `<meta property="og:title" content="Crafted">`, tags: { title: "Crafted", description: null, image: null } },
    { unit: "<meta ", head: `<meta name="description" content="Crafted">`, tags: { title: null, description: "Crafted", image: null } },
    { unit: "<title", head: `<title>Crafted</title>`, tags: { title: "Crafted", description: null, image: null } }
  ])("256 KiB of $unit repeated is read in time linear in the page", ({ unit, head, tags }) => {
    const bare = timed(crafted("", unit))
    expect(bare.tags).toBeUndefined()
    expect(bare.ms).toBeLessThan(BOUND_MS)
    const headed = timed(crafted(head, unit))
    expect(headed.tags).toEqual(tags)
    expect(headed.ms).toBeLessThan(BOUND_MS)
  })

  it("other tags, quotes, comments and raw texts left open are read in linear time too", () => {
    const units = ["<!--", "<a href=\"", "<meta content='", "</title", "<title>", "<script>", "<!DOCTYPE", "< ", "&#x", "<meta property=og:title content="]
    for (const unit of units) expect(timed(crafted("", unit)).ms, unit).toBeLessThan(BOUND_MS)
  })

  it("reads meta attributes in any order, case and quoting, the first of each key and attribute", () => {
    const html = `<HEAD><META CONTENT=Unquoted PROPERTY=OG:TITLE>
      <meta
        content = 'single "quoted"' name="Description"/>
      <meta property="og:image" content="/card.png" content="/second.png" >
      <meta property="og:title" content="second title">
      <metadata property="twitter:title" content="not a meta"><meta-x name="description" content="nor this">`
    expect(pageTags(html, PAGE)).toEqual({ title: "Unquoted", description: `single "quoted"`, image: "https://dest.example/card.png" })
  })

  it("skips comments, scripts, styles and doctypes; takes the first closed title whatever its case", () => {
    const html = `<!DOCTYPE html><!-- <meta property="og:title" content="Commented"> --><!-->
      <script>var s = '<meta property="og:description" content="Scripted"><title>Scripted</title>'</script>
      <style>/* <title>Styled</title> */</style><titles>not a title</titles>
      <TITLE lang="en">Fish &amp; chips < 5 &pound;</Title ><title>Second</title>
      <meta name=description content="Shown">`
    expect(pageTags(html, PAGE)).toEqual({ title: "Fish & chips < 5 &pound;", description: "Shown", image: null })
  })

  it("stops at a quote or a comment left open, as HTML reads the rest into it", () => {
    const quote = `<meta property="og:title" content="First"><a href="x><meta property="og:description" content="lost">`
    expect(pageTags(quote, PAGE)).toEqual({ title: "First", description: null, image: null })
    const comment = `<meta name="description" content="Kept"><!-- <meta property="og:title" content="lost">`
    expect(pageTags(comment, PAGE)).toEqual({ title: null, description: "Kept", image: null })
    expect(pageTags(`<title>Never closed`, PAGE)).toBeUndefined()
  })
})

describe("the page tag thread", () => {
  it.scoped("reads a page's tags off the calling thread, as pageTags does", () =>
    Effect.gen(function* () {
      const thread = yield* pageTagThread
      const html = crafted(`<title>Plain</title><meta property="og:image" content="/i.png">`, "<meta a")
      expect(yield* thread.parse(html, PAGE)).toEqual(pageTags(html, PAGE))
      expect(yield* thread.parse("<p>nothing</p>", PAGE)).toBeUndefined()
    })
  )

  it.scoped("a page read past its budget stops the thread and fails; the next page is read by a new thread", () =>
    Effect.gen(function* () {
      const thread = yield* pageTagThread
      // 8 MiB takes tens of ms on any machine: far past 1 ms.
      const failure = yield* Effect.flip(thread.parse(crafted("", "<meta a", 8 * 1024 * 1024), PAGE, 1))
      expect(failure).toMatchObject({ _tag: "PageTagsNotRead", reason: "no answer within 1 ms" })
      expect(yield* thread.parse("<title>After</title>", PAGE)).toEqual({ title: "After", description: null, image: null })
    })
  )
})
