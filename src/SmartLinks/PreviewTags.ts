import { SqlClient } from "@effect/sql"
import { Effect, FiberSet, Layer } from "effect"
import { PAGE_TAG_BYTES } from "./PageTags.ts"
import { pageTagThread } from "./PageTagThread.ts"
import { DestinationChanged } from "../Links/DestinationChanged.ts"
import { UrlChecker } from "../Links/UrlChecker.ts"

/**
 * Destination pages fetched at once. Each fetch holds a database connection for its reads and a
 * thread of libuv's pool (4 by default, shared with the click thread's files) for its DNS lookup: a
 * bulk of settings saves must not take them from requests.
 */
const FETCHES_AT_ONCE = 4

/**
 * Preview tags taken from a link's destination: fetched in the background when the settings are saved
 * and again when the link's URL changes, through the 404 check's address policy, time budget and
 * redirect limit, the page read up to PAGE_TAG_BYTES and parsed on a thread of its own (PageTagThread),
 * FETCHES_AT_ONCE at a time, the others queued (a link once, however often it was asked for
 * meanwhile). A page without tags (or no page) forgets what an earlier fetch found. Stored in
 * `link_page_tags` and announced like a change of the link.
 */
export class PreviewTags extends Effect.Service<PreviewTags>()("PreviewTags", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const checker = yield* UrlChecker
    // Acquired first, so released last: after the fetches under way have ended.
    const tagThread = yield* pageTagThread
    const running = yield* FiberSet.make()
    /** Links waiting for a fetch to end before theirs starts, in the order asked. */
    const queued = new Set<number>()
    let active = 0
    let closing = false
    // Fetches under way finish before the service closes (each within the check's time budget): the
    // admin CLI saves settings and exits at once. Those still queued are not started.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        closing = true
        if (queued.size > 0) yield* Effect.logWarning(`preview tags of ${queued.size} destinations not taken: the service stopped first`)
        queued.clear()
        yield* FiberSet.awaitEmpty(running)
      })
    )

    const fetchAndStore = (linkId: number) =>
      Effect.gen(function* () {
        const links = yield* sql<{ url: string }>`SELECT redirect_url AS url FROM links WHERE id = ${linkId}`
        const url = links[0]?.url
        const html = url === undefined ? undefined : yield* checker.html(url, PAGE_TAG_BYTES)
        const tags = html === undefined || url === undefined ? undefined : yield* tagThread.parse(html, url)
        if (tags === undefined) return yield* forget(linkId)
        yield* sql`
          INSERT INTO link_page_tags (link_id, title, description, image)
          VALUES (${linkId}, ${tags.title}, ${tags.description}, ${tags.image})
          ON CONFLICT (link_id) DO UPDATE
          SET title = excluded.title, description = excluded.description, image = excluded.image, fetched_at = now()`
        yield* announce(linkId)
      }).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("preview tags of a destination not stored", cause)),
        Effect.annotateLogs("link_id", linkId)
      )

    const start = (linkId: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        active += 1
        return FiberSet.run(running, fetchAndStore(linkId).pipe(Effect.ensuring(Effect.suspend(startNext))))
      })

    const startNext = (): Effect.Effect<void> => {
      active -= 1
      const next: number | undefined = closing ? undefined : queued.values().next().value
      if (next === undefined) return Effect.void
      queued.delete(next)
      return start(next)
    }

    /** The link's destination fetched now, or after those before it when FETCHES_AT_ONCE are under way. */
    const fetchInBackground = (linkId: number) =>
      Effect.suspend(() => {
        if (active < FETCHES_AT_ONCE) return start(linkId)
        queued.add(linkId)
        return Effect.void
      })

    const announce = (linkId: number) =>
      sql`SELECT pg_notify('links_changes', 'l:' || domain_id || ':' || lower(alias)) FROM links WHERE id = ${linkId}`

    /** Forgets the tags taken for the link, if there were any. */
    const forget = (linkId: number) =>
      Effect.flatMap(sql<{ link_id: number }>`DELETE FROM link_page_tags WHERE link_id = ${linkId} RETURNING link_id`, (gone) =>
        gone.length === 0 ? Effect.void : Effect.asVoid(announce(linkId))
      )

    /** Whether the link's settings take its preview from the destination: stored, and without `og`. */
    const takesFromDestination = (linkId: number) =>
      Effect.map(sql<{ link_id: number }>`SELECT link_id FROM link_settings WHERE link_id = ${linkId} AND settings->'og' IS NULL`, (rows) => rows.length > 0)

    return {
      /**
       * After a link's URL changed: when its tags are taken from the destination, those of the old
       * one are forgotten at once (a crawler follows the redirect meanwhile) and the new one's fetched.
       */
      destinationChanged: (linkId: number) =>
        Effect.gen(function* () {
          if (!(yield* takesFromDestination(linkId))) return
          yield* forget(linkId)
          yield* fetchInBackground(linkId)
        }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("preview tags of a new destination not taken", cause))),
      /**
       * After a link's settings were saved: without `og` of their own (and not cleared), its
       * destination's tags are taken in the background; otherwise any taken before are forgotten.
       */
      settingsSaved: (linkId: number, takeFromDestination: boolean) =>
        takeFromDestination ? fetchInBackground(linkId) : forget(linkId)
    }
  })
}) {}

/** Links' `DestinationChanged`, served by the preview tags. */
export const DestinationChangedLive = Layer.effect(
  DestinationChanged,
  Effect.map(PreviewTags, (previews) => previews.destinationChanged)
)
