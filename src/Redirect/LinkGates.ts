import type { StoredSettings } from "../SmartLinks/SettingsModel.ts"
import type { Preview } from "./HtmlPages.ts"
import { passwordVersion } from "./PasswordCookie.ts"

/**
 * What stands between a visitor and a link's destination, compiled from its settings when the link is
 * loaded into the cache. A link with none of them has no gates and pays nothing.
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
  /** The link's short URL (`short_link`), the preview page's `og:url`: built once, when the link is loaded. */
  readonly shortUrl: string
  /** What the gates are counted as against the cache's byte bound. */
  readonly weight: number
}

const previewOf = (og: StoredSettings["og"], taken: Preview | null): Preview | null => {
  if (og === undefined) return taken
  return { title: og.title ?? null, description: og.description ?? null, image: og.image ?? null }
}

/**
 * The gates of a link's settings (none stored: `settings` undefined), its password hash and the tags
 * taken from its destination; `shortUrl` is the link's own.
 */
export const compileGates = (
  settings: StoredSettings | undefined,
  passwordHash: string | null,
  taken: Preview | null,
  shortUrl: string
): LinkGates | undefined => {
  const preview = previewOf(settings?.og, taken)
  const gates: LinkGates = {
    password: passwordHash === null ? null : { hash: passwordHash, version: passwordVersion(passwordHash) },
    maxClicks: settings?.max_clicks ?? null,
    expiresAt: settings?.expires_at === undefined ? null : settings.expires_at * 1000,
    expiredUrl: settings?.expired_url ?? null,
    preview,
    shortUrl,
    weight:
      shortUrl.length +
      (passwordHash?.length ?? 0) +
      (settings?.expired_url?.length ?? 0) +
      (preview === null ? 0 : (preview.title?.length ?? 0) + (preview.description?.length ?? 0) + (preview.image?.length ?? 0))
  }
  const none = gates.password === null && gates.maxClicks === null && gates.expiresAt === null && gates.expiredUrl === null && preview === null
  return none ? undefined : gates
}
