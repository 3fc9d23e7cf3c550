import { BlockList, isIP } from "node:net"

/** Whether the URL check may connect to `address` (an IP address as resolved) on `port`. */
export type AddressPolicy = (address: string, port: number) => boolean

const subnets = (family: "ipv4" | "ipv6", entries: ReadonlyArray<readonly [string, number]>): BlockList => {
  const list = new BlockList()
  for (const [network, bits] of entries) list.addSubnet(network, bits, family)
  return list
}

/** IPv4 ranges that are not the public internet (IANA special-purpose registry, RFC 6890 and successors). */
const nonPublicV4 = subnets("ipv4", [
  ["0.0.0.0", 8], // "this network", 0.0.0.0 reaches the local host
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata endpoints
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // TEST-NET-1
  ["192.88.99.0", 24], // retired 6to4 relay anycast
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // TEST-NET-2
  ["203.0.113.0", 24], // TEST-NET-3
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4] // reserved, and 255.255.255.255
])

/** Only 2000::/3 is allocated as global unicast; everything else in IPv6 is refused outright. */
const globalUnicastV6 = subnets("ipv6", [["2000::", 3]])

const nonPublicV6 = subnets("ipv6", [
  ["2001::", 23], // IETF protocol assignments: Teredo 2001::/32 (tunnels to any IPv4), benchmarking, ORCHID
  ["2001:db8::", 32], // documentation
  ["3fff::", 20] // documentation (RFC 9637)
])

/** The eight 16-bit groups of a valid IPv6 address, with a trailing dotted quad folded into the last two. */
const groups = (ip: string): ReadonlyArray<number> => {
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip)
  const text =
    quad === null
      ? ip
      : `${ip.slice(0, quad.index)}${((Number(quad[1]) << 8) | Number(quad[2])).toString(16)}:${(
          (Number(quad[3]) << 8) |
          Number(quad[4])
        ).toString(16)}`
  const [head = "", tail] = text.split("::")
  const left = head === "" ? [] : head.split(":")
  const right = tail === undefined || tail === "" ? [] : tail.split(":")
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill("0")
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16))
}

const v4From = (high: number, low: number): string => [high >> 8, high & 255, low >> 8, low & 255].join(".")

const allZero = (values: ReadonlyArray<number>) => values.every((value) => value === 0)

/** The IPv4 address an IPv6 address stands for: IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4 (2002::/16). */
const embeddedV4 = (g: ReadonlyArray<number>): string | undefined => {
  if (allZero(g.slice(0, 5)) && g[5] === 0xffff) return v4From(g[6]!, g[7]!)
  if (g[0] === 0x64 && g[1] === 0xff9b && allZero(g.slice(2, 6))) return v4From(g[6]!, g[7]!)
  if (g[0] === 0x2002) return v4From(g[1]!, g[2]!)
  return undefined
}

/**
 * Whether `ip` is a public unicast address that the URL check may connect to. Anything else is
 * refused: loopback, private, CGNAT, link-local, multicast, unspecified, documentation and reserved
 * ranges, and IPv6 addresses that carry such an IPv4 address (mapped, NAT64, 6to4). The deprecated
 * IPv4-compatible form `::a.b.c.d` lies outside 2000::/3 and is refused whatever it carries.
 * Text that is not a standard IP address (`127.1`, `0177.0.0.1`, a host name) is not public:
 * callers normalise with `new URL()` or resolve first.
 */
export const isPublicAddress = (raw: string): boolean => {
  const ip = raw.trim().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "")
  const version = isIP(ip)
  if (version === 4) return !nonPublicV4.check(ip, "ipv4")
  if (version !== 6) return false
  const g = groups(ip)
  const v4 = embeddedV4(g)
  if (v4 !== undefined) return isPublicAddress(v4)
  const canonical = g.map((group) => group.toString(16)).join(":")
  return globalUnicastV6.check(canonical, "ipv6") && !nonPublicV6.check(canonical, "ipv6")
}

/** Public addresses only: the production policy. */
export const publicAddressesOnly: AddressPolicy = (address) => isPublicAddress(address)

/** Every address, for URL_CHECK_ALLOW_PRIVATE=true (tests and closed networks). */
export const anyAddress: AddressPolicy = () => true
