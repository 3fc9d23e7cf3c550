import { ConfigError, Either } from "effect"
import { BlockList, isIP } from "node:net"

/** `::ffff:1.2.3.4` and `1.2.3.4` are the same client; brackets and zones are dropped. */
export const normaliseIp = (raw: string): string => {
  let ip = raw.trim()
  if (ip.startsWith("[") && ip.endsWith("]")) ip = ip.slice(1, -1)
  const zone = ip.indexOf("%")
  if (zone !== -1) ip = ip.slice(0, zone)
  const lower = ip.toLowerCase()
  if (lower.startsWith("::ffff:") && isIP(lower.slice(7)) === 4) return lower.slice(7)
  return lower
}

const family = (ip: string) => (isIP(ip) === 6 ? "ipv6" : "ipv4")

/** The addresses and CIDRs of TRUST_PROXY: proxies whose `X-Forwarded-For` is believed. */
export class ProxyList {
  private constructor(private readonly list: BlockList, readonly size: number) {}

  static readonly none = new ProxyList(new BlockList(), 0)

  static parse(raw: string, variable: string): Either.Either<ProxyList, ConfigError.ConfigError> {
    const list = new BlockList()
    const entries = raw.split(",").map((s) => s.trim()).filter((s) => s !== "")
    for (const entry of entries) {
      const [address = "", prefix, ...rest] = entry.split("/")
      const ip = normaliseIp(address)
      const version = isIP(ip)
      const bits = prefix === undefined ? (version === 6 ? 128 : 32) : Number(prefix)
      const maxBits = version === 6 ? 128 : 32
      if (version === 0 || rest.length > 0 || !Number.isInteger(bits) || bits < 0 || bits > maxBits || prefix === "") {
        return Either.left(
          ConfigError.InvalidData([variable], `"${entry}" is not an IP address or CIDR (for example 10.0.0.0/8, ::1)`)
        )
      }
      list.addSubnet(ip, bits, family(ip))
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
   * on their own.
   */
  clientIp(socketAddress: string | undefined, forwardedFor: string | ReadonlyArray<string> | undefined): string {
    let client = normaliseIp(socketAddress ?? "")
    if (forwardedFor === undefined || !this.trusts(client)) return client
    const hops = (typeof forwardedFor === "string" ? forwardedFor : forwardedFor.join(",")).split(",")
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normaliseIp(hops[i]!)
      if (isIP(hop) === 0) return client
      client = hop
      if (!this.trusts(hop)) return hop
    }
    return client
  }
}
