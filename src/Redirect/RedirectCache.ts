import { Effect, Option, Schema } from "effect"
import { createHmac } from "node:crypto"
import { TokenSecret } from "../Auth/TokenStore.ts"
import { loadGeoLookup } from "../Clicks/GeoIp.ts"
import { StoredSettings, Target } from "../SmartLinks/SettingsModel.ts"
import { compileRoute, type GeoLookup, placeLookup, settingsNeedGeo, type SmartRoute } from "../SmartLinks/SmartRoute.ts"
import { DatabasePool } from "../Sql/Database.ts"
import { ChangeFeed } from "../Sql/ChangeFeed.ts"
import { recordRedirectLookup } from "../Platform/Metrics.ts"
import { shortLinkOf } from "../Links/Link.ts"
import { compileGates, type LinkGates } from "./LinkGates.ts"

export interface DomainEntry {
  readonly id: number
  readonly name: string
  readonly active: boolean
  readonly hasSsl: boolean
  readonly homepage: string | null
  readonly url404: string | null
}

export interface LinkEntry {
  readonly id: number
  readonly active: boolean
  readonly redirectUrl: string
  readonly redirectType: number
  /** The link's rules and split, compiled; absent for a link without (which then pays nothing for them). */
  readonly smart?: SmartRoute<Destination>
  /** Its password, limit, expiry and preview; absent for a link without any. */
  readonly gates?: LinkGates
  /** The headers of a redirect to `redirectUrl`, flat (name, value, ...), made once: frozen. */
  readonly headers: Array<string>
}

/** A destination of a link's rules or split, with the headers of a redirect to it, made once. */
export interface Destination extends Target {
  readonly headers: Array<string>
}

/** What browsers may keep of a link's redirect: nothing of a gated link's, so that each visit meets the gates again. */
const LINK_CACHE_CONTROL = "private, max-age=90"

/** The headers of a link's redirect to `location`, as `writeHead` takes them; frozen, so that they can be shared. */
export const redirectHeaders = (location: string, gated: boolean): Array<string> => {
  const headers = ["location", location, "cache-control", gated ? "no-store" : LINK_CACHE_CONTROL]
  Object.freeze(headers)
  return headers
}

/** What the cache knows of an alias: the link, `null` for none (a negative entry), `undefined` unknown. */
export type LinkLookup = LinkEntry | null | undefined

/** What an entry is counted as against a byte bound: its key's characters and this much besides. */
export const ENTRY_OVERHEAD_BYTES = 64

/** An entry's weight against a byte bound: by default its key's characters and ENTRY_OVERHEAD_BYTES. */
export type Weigh<V> = (key: string, value: V) => number

const keyWeight = (key: string) => key.length + ENTRY_OVERHEAD_BYTES

class Slot<V> {
  /** Set by a read, cleared when eviction passes the entry over once (a second chance). */
  used = false
  constructor(
    readonly value: V,
    readonly weight: number
  ) {}
}

/**
 * A map that forgets entries not read lately past `capacity` entries or `maxBytes` of their weights
 * (keys and string values are ASCII: a character is a byte). A read only marks its entry (a delete
 * and re-insert per hit churned large Maps); eviction takes the oldest entry not read since it was
 * last passed over, moving a read one to the young end with its mark cleared (second chance).
 */
export class Lru<V> {
  private readonly entries = new Map<string, Slot<V>>()
  private counted = 0
  constructor(
    private readonly capacity: number,
    private readonly maxBytes = Number.POSITIVE_INFINITY,
    private readonly weigh: Weigh<V> = keyWeight
  ) {}
  get(key: string): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    entry.used = true
    return entry.value
  }
  set(key: string, value: V) {
    this.delete(key)
    const weight = this.weigh(key, value)
    // Heavier than the whole bound: it would be evicted at once, and making room for it would empty the cache.
    if (weight > this.maxBytes || this.capacity < 1) return
    // Room is made before the entry goes in, so that it is not itself passed over as the oldest.
    while (this.entries.size > 0 && (this.entries.size >= this.capacity || this.counted + weight > this.maxBytes)) {
      const [oldestKey, slot] = this.entries.entries().next().value!
      if (slot.used) {
        slot.used = false
        this.entries.delete(oldestKey)
        this.entries.set(oldestKey, slot)
      } else {
        this.delete(oldestKey)
      }
    }
    this.entries.set(key, new Slot(value, weight))
    this.counted += weight
  }
  delete(key: string) {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    this.counted -= entry.weight
  }
  /** Forgets every entry whose key `matches`: a walk over all of them, for rare changes. */
  deleteWhere(matches: (key: string) => boolean) {
    for (const key of [...this.entries.keys()]) if (matches(key)) this.delete(key)
  }
  clear() {
    this.entries.clear()
    this.counted = 0
  }
  get size() {
    return this.entries.size
  }
  get bytes() {
    return this.counted
  }
}

/**
 * A key of its own: the alias is a slice of the request's URL, and V8 keeps a slice's whole parent
 * string alive, so a kept key held its request's query string too (up to the 16 KiB header limit).
 * Keys are ASCII.
 */
const ownCopy = (key: string) => Buffer.from(key, "latin1").toString("latin1")

export interface RedirectCacheOptions {
  readonly links: number
  /** The link cache's bound in bytes, each link weighing its key and its long URL, besides its count. */
  readonly linkBytes: number
  readonly unknownAliases: number
  /** The negative cache's bound in bytes as `Lru` counts them, besides its count. */
  readonly unknownAliasBytes: number
  /** How long a cache miss may wait for the database before the redirect answers 503. */
  readonly queryTimeoutMs: number
}

export const redirectCacheDefaults: RedirectCacheOptions = {
  links: 100_000,
  linkBytes: 64 * 1024 * 1024,
  unknownAliases: 100_000,
  unknownAliasBytes: 8 * 1024 * 1024,
  queryTimeoutMs: 2000
}

interface LinkRow {
  id: string | number
  alias: string
  /** The link's domain: its name and whether its short links are https. */
  domain: string
  has_ssl: boolean
  status: string
  redirect_url: string
  redirect_type: number
  /** The link's smart settings and their served targets, null for a link without (sql/0016). */
  settings: unknown
  targets: unknown
  password_hash: string | null
  /** Preview tags taken from the destination page (sql/0017), null without. */
  tag_title: string | null
  tag_description: string | null
  tag_image: string | null
  tags_taken: boolean
}

interface DomainRow {
  id: string | number
  domain: string
  status: string
  homepage: string | null
  url_404: string | null
  has_ssl: boolean
}

/** Unnamed, as the click counter's statements (ClickLimits.ts): a cache miss plans it anew. */
const LINK_QUERY = {
  text: `SELECT l.id, l.alias, d.domain, d.has_ssl, l.status, l.redirect_url, l.redirect_type, s.settings, s.targets, s.password_hash,
                t.title AS tag_title, t.description AS tag_description, t.image AS tag_image, t.link_id IS NOT NULL AS tags_taken
         FROM links l JOIN domains d ON d.id = l.domain_id
           LEFT JOIN link_settings s ON s.link_id = l.id LEFT JOIN link_page_tags t ON t.link_id = l.id
         WHERE l.domain_id = $1 AND lower(l.alias) = $2 AND l.status <> 'deleted'`
}

const toDomain = (row: DomainRow): DomainEntry => ({
  id: Number(row.id),
  name: row.domain,
  active: row.status === "active",
  hasSsl: row.has_ssl,
  homepage: row.homepage,
  url404: row.url_404
})

export class QueryTimeout extends Error {}

const decodeSettings = Schema.decodeUnknownOption(StoredSettings)
const decodeTargets = Schema.decodeUnknownOption(Schema.Array(Target))

/** The link's password, limit, expiry and preview, when it has any of them. */
const gatesOf = (row: LinkRow): { readonly gates?: LinkGates } => {
  const settings = row.settings === null ? undefined : Option.getOrUndefined(decodeSettings(row.settings))
  const taken = row.tags_taken ? { title: row.tag_title, description: row.tag_description, image: row.tag_image } : null
  const gates = compileGates(settings, row.password_hash, taken, shortLinkOf(row.has_ssl, row.domain, row.alias))
  return gates === undefined ? {} : { gates }
}

/**
 * Domains by host (all of them, loaded at start: they are few) and links by domain and lower-cased
 * alias (bounded, with negative entries kept apart so that scanning for aliases cannot evict real
 * links). Announcements from the change feed evict entries; a lookup that raced with one is
 * answered but not kept.
 */
export const makeRedirectCache = (options: RedirectCacheOptions = redirectCacheDefaults) =>
  Effect.gen(function* () {
    const { pool } = yield* DatabasePool
    const feed = yield* ChangeFeed
    let domains = new Map<string, DomainEntry>()
    // Long URLs reach 4,096 characters: 100,000 of them would hold 400 MB.
    const links = new Lru<LinkEntry>(
      options.links,
      options.linkBytes,
      (key, link) => keyWeight(key) + link.redirectUrl.length + (link.smart?.weight ?? 0) + (link.gates?.weight ?? 0)
    )
    const { dataKey } = yield* TokenSecret
    const splitKey = createHmac("sha256", dataKey).update("smart link split").digest("hex")
    // Read on the first link whose rules need a place: most processes never hold it on this thread.
    let geo: Promise<GeoLookup> | undefined

    const geoLookup = () =>
      (geo ??= loadGeoLookup().then(
        placeLookup,
        (error: unknown) => {
          geo = undefined
          throw error
        }
      ))

    /** The link's settings compiled, if it has rules or a split (a row that does not decode has none). */
    const smartOf = async (row: LinkRow, gated: boolean): Promise<SmartRoute<Destination> | undefined> => {
      if (row.settings === null) return undefined
      const settings = decodeSettings(row.settings)
      const targets = decodeTargets(row.targets)
      if (Option.isNone(settings) || Option.isNone(targets)) return undefined
      const lookup = settingsNeedGeo(settings.value) ? await geoLookup() : undefined
      const destinations = targets.value.map((target) => ({ ...target, headers: redirectHeaders(target.url, gated) }))
      return compileRoute(settings.value, destinations, {
        linkId: Number(row.id),
        splitKey,
        geo: lookup,
        weight: JSON.stringify(row.settings).length + JSON.stringify(row.targets).length
      })
    }
    const unknown = new Lru<true>(options.unknownAliases, options.unknownAliasBytes)
    // Bumped by every eviction: a lookup started before one may hold what the eviction was about.
    let generation = 0
    const inFlight = new Map<string, Promise<LinkEntry | null>>()

    // Per name: a reload answered after a newer one was asked for is dropped.
    const domainVersions = new Map<string, number>()
    // Reloads under way: a request for such a host waits for it (a domain just made or changed
    // through this instance is announced before the API answers, but read only afterwards).
    const domainsLoading = new Map<string, Promise<void>>()
    const reloadDomain = (name: string) => {
      const loading = loadDomain(name)
        .catch(reloadDomains)
        .finally(() => {
          if (domainsLoading.get(name) === loading) domainsLoading.delete(name)
        })
      domainsLoading.set(name, loading)
    }
    const loadDomain = async (name: string) => {
      const version = (domainVersions.get(name) ?? 0) + 1
      domainVersions.set(name, version)
      const { rows } = await pool.query<DomainRow>(
        "SELECT id, domain, status, homepage, url_404, has_ssl FROM domains WHERE domain = $1 AND status <> 'deleted'",
        [name]
      )
      if (domainVersions.get(name) !== version) return
      domainVersions.delete(name)
      const row = rows[0]
      const before = domains.get(name)
      if (row === undefined) domains.delete(name)
      else domains.set(name, toDomain(row))
      if (before !== undefined) forgetShortUrls(before, domains.get(name))
    }

    const loadAllDomains = async () => {
      const { rows } = await pool.query<DomainRow>("SELECT id, domain, status, homepage, url_404, has_ssl FROM domains WHERE status <> 'deleted'")
      const before = domains
      domains = new Map(rows.map((row) => [row.domain, toDomain(row)]))
      for (const [name, domain] of before) forgetShortUrls(domain, domains.get(name))
    }

    /** Links hold their short URL (built from the domain's name and scheme when loaded): a domain changing either forgets them. */
    const forgetShortUrls = (before: DomainEntry, after: DomainEntry | undefined) => {
      if (after !== undefined && after.id === before.id && after.hasSsl === before.hasSsl) return
      generation++
      const prefix = `${before.id}:`
      links.deleteWhere((key) => key.startsWith(prefix))
    }

    const reloadDomains = () => {
      loadAllDomains().catch(() => setTimeout(reloadDomains, 1000))
    }

    yield* feed.subscribe({
      onChange: (payload) => {
        if (payload.startsWith("l:")) {
          generation++
          const key = payload.slice(2)
          links.delete(key)
          unknown.delete(key)
        } else if (payload.startsWith("d:")) {
          reloadDomain(payload.slice(2))
        }
      },
      onReset: () => {
        generation++
        links.clear()
        unknown.clear()
        reloadDomains()
      }
    })
    yield* Effect.promise(loadAllDomains)

    const query = async (domainId: number, alias: string, key: string): Promise<LinkEntry | null> => {
      const started = generation
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new QueryTimeout("the database did not answer in time")), options.queryTimeoutMs)
      })
      recordRedirectLookup()
      try {
        const { rows } = await Promise.race([pool.query<LinkRow>({ ...LINK_QUERY, values: [domainId, alias] }), timeout])
        const row = rows[0]
        const gated = row === undefined ? {} : gatesOf(row)
        const smart = row === undefined ? undefined : await smartOf(row, gated.gates !== undefined)
        const entry: LinkEntry | null =
          row === undefined
            ? null
            : {
                id: Number(row.id),
                active: row.status === "active",
                redirectUrl: row.redirect_url,
                redirectType: row.redirect_type,
                ...(smart === undefined ? {} : { smart }),
                ...gated,
                headers: redirectHeaders(row.redirect_url, gated.gates !== undefined)
              }
        if (started === generation) {
          if (entry === null) unknown.set(ownCopy(key), true)
          else links.set(ownCopy(key), entry)
        }
        return entry
      } finally {
        clearTimeout(timer)
      }
    }

    return {
      domain: (host: string): DomainEntry | undefined => domains.get(host),
      /** The reload of this host's domain under way, if any. */
      domainLoading: (host: string): Promise<void> | undefined => domainsLoading.get(host),
      /** Synchronous: the cached answer, or `undefined` when the database must be asked. */
      cached: (domainId: number, alias: string): LinkLookup => {
        const key = `${domainId}:${alias}`
        const link = links.get(key)
        if (link !== undefined) return link
        return unknown.get(key) === undefined ? undefined : null
      },
      /** One indexed query; concurrent misses of one alias share it. */
      load: (domainId: number, alias: string): Promise<LinkEntry | null> => {
        const key = `${domainId}:${alias}`
        let pending = inFlight.get(key)
        if (pending === undefined) {
          pending = query(domainId, alias, key).finally(() => inFlight.delete(key))
          inFlight.set(key, pending)
        }
        return pending
      },
      sizes: () => ({
        domains: domains.size,
        links: links.size,
        linkBytes: links.bytes,
        unknownAliases: unknown.size,
        unknownAliasBytes: unknown.bytes
      })
    }
  })

export type RedirectCache = Effect.Effect.Success<ReturnType<typeof makeRedirectCache>>
