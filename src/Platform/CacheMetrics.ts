import { type Family, gaugeFamily } from "./Collectors.ts"

/** What the redirect handler's caches hold (`RedirectCache.sizes`). */
export interface RedirectCacheSizes {
  readonly domains: number
  readonly links: number
  readonly linkBytes: number
  readonly unknownAliases: number
  readonly unknownAliasBytes: number
}

/** The sizes of the redirect handler's caches as gauges, by cache. */
export const redirectCacheFamilies = (sizes: RedirectCacheSizes): ReadonlyArray<Family> => [
  gaugeFamily("redirect_cache_entries", "Entries of the redirect handler's caches: links, unknown aliases, domains", [
    ['cache="links"', sizes.links],
    ['cache="unknown_aliases"', sizes.unknownAliases],
    ['cache="domains"', sizes.domains]
  ]),
  gaugeFamily("redirect_cache_bytes", "Estimated memory of the redirect handler's link and unknown-alias caches, in bytes", [
    ['cache="links"', sizes.linkBytes],
    ['cache="unknown_aliases"', sizes.unknownAliasBytes]
  ])
]
