import type { Preview } from "./HtmlPages.ts"

/**
 * What stands between a visitor and a link's destination, compiled from its settings when the link is
 * loaded into the cache. A link with none of them has no gates (`null`) and pays nothing.
 */
export interface LinkGates {
  /** The argon2id hash of the link's password, and the version passes are bound to. */
  readonly password: { readonly hash: string; readonly version: string } | null
  readonly maxClicks: number | null
  /** Unix milliseconds. */
  readonly expiresAt: number | null
  readonly expiredUrl: string | null
  /** Tags for link-preview crawlers: the link's `og`, else those taken from its destination. */
  readonly preview: Preview | null
}
