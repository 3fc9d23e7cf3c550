import { SqlClient } from "@effect/sql"
import { Effect, FiberSet } from "effect"
import { PAGE_TAG_BYTES, pageTags } from "./PageTags.ts"
import { UrlChecker } from "./UrlChecker.ts"

/**
 * Preview tags taken from a link's destination: fetched once, in the background, through the 404
 * check's address policy, time budget and redirect limit, the page read up to PAGE_TAG_BYTES. A page
 * without tags (or no page) forgets what an earlier fetch found.
 */
export class PreviewTags extends Effect.Service<PreviewTags>()("PreviewTags", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const checker = yield* UrlChecker
    const running = yield* FiberSet.make()

    const fetchAndStore = (linkId: number, url: string) =>
      Effect.gen(function* () {
        const html = yield* checker.html(url, PAGE_TAG_BYTES)
        const tags = html === undefined ? undefined : pageTags(html, url)
        if (tags === undefined) yield* sql`DELETE FROM link_page_tags WHERE link_id = ${linkId}`
        else {
          yield* sql`
            INSERT INTO link_page_tags (link_id, title, description, image)
            VALUES (${linkId}, ${tags.title}, ${tags.description}, ${tags.image})
            ON CONFLICT (link_id) DO UPDATE
            SET title = excluded.title, description = excluded.description, image = excluded.image, fetched_at = now()`
        }
        yield* sql`SELECT pg_notify('links_changes', 'l:' || domain_id || ':' || lower(alias)) FROM links WHERE id = ${linkId}`
      }).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("preview tags of a destination not stored", cause)),
        Effect.annotateLogs("link_id", linkId)
      )

    return {
      /** Starts taking the destination's tags for the link; does not wait for them. */
      takeFrom: (linkId: number, url: string) => FiberSet.run(running, fetchAndStore(linkId, url)).pipe(Effect.asVoid)
    }
  })
}) {}
