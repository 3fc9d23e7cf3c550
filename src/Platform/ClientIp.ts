import { ConfigError, Context, Either } from "effect"
import { BlockList, isIP } from "node:net"

const MAPPED = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/

/** The canonical text of an IPv6 address (lowercase, zeros compressed), as WHATWG URL writes it. */
const canonicalV6 = (ip: string): string => {
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1)
  } catch {
    return ip
  }
}

/**
 * One client, one spelling: brackets and zones are dropped, IPv6 is written canonically, and an
 * IPv4-mapped IPv6 address in any spelling (`::ffff:1.2.3.4`, `::ffff:102:304`) is the IPv4 address.
 * Anything that is not an IP address is returned trimmed and lowercased, and `isIP` rejects it.
 */
export const normaliseIp = (raw: string): string => {
  let ip = raw.trim()
  if (ip.startsWith("[") && ip.endsWith("]")) ip = ip.slice(1, -1)
  const zone = ip.indexOf("%")
  if (zone !== -1) ip = ip.slice(0, zone)
  ip = ip.toLowerCase()
  if (isIP(ip) !== 6) return ip
  const canonical = canonicalV6(ip)
  const mapped = MAPPED.exec(canonical)
  if (mapped === null) return canonical
  const high = parseInt(mapped[1]!, 16)
  const low = parseInt(mapped[2]!, 16)
  return [high >> 8, high & 255, low >> 8, low & 255].join(".")
}

/**
 * What one client's rate budget is kept for: an IPv4 address, or the /64 network of an IPv6 address
 * (one subscriber's usual allocation), in one spelling (`2001:db8:1:2::/64`).
 */
export const clientNetwork = (raw: string): string => {
  const ip = normaliseIp(raw)
  if (isIP(ip) !== 6) return ip
  const [head = "", tail] = ip.split("::")
  const left = head === "" ? [] : head.split(":")
  const right = tail === undefined || tail === "" ? [] : tail.split(":")
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right]
  return `${canonicalV6(`${groups.slice(0, 4).join(":")}::`)}/64`
}

/** An `X-Forwarded-For` entry: an address, optionally with a port (`1.2.3.4:80`, `[::1]:80`). */
const hopAddress = (raw: string): string => {
  const entry = raw.trim()
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(entry)
  if (bracketed !== null) return normaliseIp(bracketed[1]!)
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(entry)
  return normaliseIp(v4WithPort === null ? entry : v4WithPort[1]!)
}

/**
 * One TRUST_PROXY entry (or a smart link's `cidr` value) as a subnet of the family it is written in. Node's BlockList matches IPv4
 * addresses against IPv6 rules through their mapped form, so `::ffff:10.0.0.0/104` covers 10.0.0.0/8.
 */
export const parseSubnet = (entry: string) => {
  const slash = entry.indexOf("/")
  const prefix = slash === -1 ? undefined : entry.slice(slash + 1)
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return undefined
  const ip = (slash === -1 ? entry : entry.slice(0, slash)).trim().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "")
  const version = isIP(ip)
  const maxBits = version === 6 ? 128 : 32
  const bits = prefix === undefined ? maxBits : Number(prefix)
  if (version === 0 || bits > maxBits) return undefined
  return { ip, bits, family: version === 6 ? ("ipv6" as const) : ("ipv4" as const) }
}

/** The addresses and CIDRs of TRUST_PROXY: proxies whose `X-Forwarded-For` is believed. */
/**
 * The client network of the API request being served (`clientNetwork` of its client IP, by the
 * trusted-proxy rules), set by the API edge; "local" outside a request (the CLI, the first start).
 */
export class ClientNetwork extends Context.Reference<ClientNetwork>()("ClientNetwork", { defaultValue: (): string => "local" }) {}

export class ProxyList {
  private constructor(private readonly list: BlockList, readonly size: number) {}

  static readonly none = new ProxyList(new BlockList(), 0)

  static parse(raw: string, variable: string): Either.Either<ProxyList, ConfigError.ConfigError> {
    const list = new BlockList()
    const entries = raw.split(",").map((s) => s.trim()).filter((s) => s !== "")
    for (const entry of entries) {
      const subnet = parseSubnet(entry)
      if (subnet === undefined) {
        return Either.left(
          ConfigError.InvalidData([variable], `"${entry}" is not an IP address or CIDR (for example 10.0.0.0/8, ::1)`)
        )
      }
      list.addSubnet(subnet.ip, subnet.bits, subnet.family)
    }
    return Either.right(new ProxyList(list, entries.length))
  }

  trusts(ip: string): boolean {
    const version = isIP(ip)
    return this.size > 0 && version !== 0 && this.list.check(ip, version === 6 ? "ipv6" : "ipv4")
  }

  /**
   * The client's address: the socket peer, unless that peer is a trusted proxy; then
   * `X-Forwarded-For` is walked from the right, skipping trusted proxies, and the first address
   * that is not one is the client. The leftmost entries are written by the client and never believed
   * on their own. An entry that is not an address ends the walk at the last trusted hop: nothing
   * to its left can be believed.
   */
  clientIp(socketAddress: string | undefined, forwardedFor: string | ReadonlyArray<string> | undefined): string {
    let client = normaliseIp(socketAddress ?? "")
    if (forwardedFor === undefined || !this.trusts(client)) return client
    const hops = (typeof forwardedFor === "string" ? forwardedFor : forwardedFor.join(",")).split(",")
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hopAddress(hops[i]!)
      if (isIP(hop) === 0) return client
      client = hop
      if (!this.trusts(hop)) return hop
    }
    return client
  }
}
