import { describe, expect, it } from "@effect/vitest"
import { anyAddress, isPublicAddress, publicAddressesOnly } from "../src/Links/AddressPolicy.ts"

/** [address, why it is refused]: every range at both ends, and the same address in other spellings. */
const refused: ReadonlyArray<readonly [string, string]> = [
  ["0.0.0.0", "unspecified"],
  ["0.255.255.255", "this network, last"],
  ["10.0.0.0", "private 10/8, first"],
  ["10.255.255.255", "private 10/8, last"],
  ["100.64.0.0", "CGNAT, first"],
  ["100.127.255.255", "CGNAT, last"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback, last"],
  ["169.254.0.1", "link-local"],
  ["169.254.169.254", "cloud metadata"],
  ["172.16.0.0", "private 172.16/12, first"],
  ["172.31.255.255", "private 172.16/12, last"],
  ["192.0.0.1", "IETF protocol assignments"],
  ["192.0.2.1", "TEST-NET-1"],
  ["192.88.99.1", "6to4 relay anycast"],
  ["192.168.0.1", "private 192.168/16"],
  ["192.168.255.255", "private 192.168/16, last"],
  ["198.18.0.1", "benchmarking, first /16"],
  ["198.19.255.255", "benchmarking, last"],
  ["198.51.100.7", "TEST-NET-2"],
  ["203.0.113.9", "TEST-NET-3"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.255", "multicast, last"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "broadcast"],
  ["::", "IPv6 unspecified"],
  ["::1", "IPv6 loopback"],
  ["0:0:0:0:0:0:0:1", "IPv6 loopback, long form"],
  ["[::1]", "IPv6 loopback, bracketed"],
  ["fc00::1", "unique local, fc"],
  ["fd12:3456::1", "unique local, fd"],
  ["fe80::1", "link-local"],
  ["fe80::1%eth0", "link-local with a zone"],
  ["febf:ffff::1", "link-local, last"],
  ["fec0::1", "site-local (deprecated)"],
  ["ff02::1", "multicast"],
  ["ff0e::1", "global multicast"],
  ["2001:db8::1", "documentation"],
  ["2001:DB8:FFFF::1", "documentation, upper case"],
  ["3fff::1", "documentation (RFC 9637)"],
  ["2001::1", "Teredo"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo, real shape"],
  ["2001:2::1", "benchmarking"],
  ["100::1", "discard-only"],
  ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
  ["::FFFF:127.0.0.1", "IPv4-mapped loopback, upper case"],
  ["::ffff:7f00:1", "IPv4-mapped loopback in hex"],
  ["0:0:0:0:0:ffff:7f00:0001", "IPv4-mapped loopback, long hex"],
  ["::ffff:10.0.0.1", "IPv4-mapped private"],
  ["::ffff:a9fe:a9fe", "IPv4-mapped metadata address in hex"],
  ["::ffff:0.0.0.0", "IPv4-mapped unspecified"],
  ["::ffff:0:7f00:1", "IPv4-translated (SIIT), outside 2000::/3"],
  ["::127.0.0.1", "IPv4-compatible loopback"],
  ["::7f00:1", "IPv4-compatible loopback in hex"],
  ["::8.8.8.8", "IPv4-compatible, deprecated whatever it carries"],
  ["64:ff9b::127.0.0.1", "NAT64 of loopback"],
  ["64:ff9b::a00:1", "NAT64 of 10.0.0.1 in hex"],
  ["64:ff9b::c0a8:101", "NAT64 of 192.168.1.1"],
  ["64:ff9b:1::808:808", "local-use NAT64 (RFC 8215)"],
  ["2002:7f00:1::1", "6to4 of loopback"],
  ["2002:c0a8:101::1", "6to4 of 192.168.1.1"],
  ["2002:a9fe:a9fe::", "6to4 of the metadata address"],
  ["5f00::1", "SRv6 SIDs, outside 2000::/3"],
  ["127.1", "not a standard address: must be normalised first"],
  ["2130706433", "not a standard address"],
  ["0x7f000001", "not a standard address"],
  ["0177.0.0.1", "not a standard address"],
  ["localhost", "a name, not an address"],
  ["", "empty"],
  ["example.com", "a name, not an address"],
  ["1.2.3.4.5", "malformed"],
  ["::ffff:999.0.0.1", "malformed"]
]

const allowed: ReadonlyArray<readonly [string, string]> = [
  ["1.1.1.1", "public IPv4"],
  ["8.8.8.8", "public IPv4"],
  ["9.255.255.255", "just below 10/8"],
  ["11.0.0.0", "just above 10/8"],
  ["100.63.255.255", "just below CGNAT"],
  ["100.128.0.0", "just above CGNAT"],
  ["126.255.255.255", "just below loopback"],
  ["128.0.0.0", "just above loopback"],
  ["169.253.255.255", "just below link-local"],
  ["172.15.255.255", "just below 172.16/12"],
  ["172.32.0.0", "just above 172.16/12"],
  ["192.0.1.1", "between 192.0.0/24 and 192.0.2/24"],
  ["192.167.255.255", "just below 192.168/16"],
  ["192.169.0.0", "just above 192.168/16"],
  ["198.17.255.255", "just below benchmarking"],
  ["198.20.0.0", "just above benchmarking"],
  ["223.255.255.255", "just below multicast"],
  [" 93.184.215.14 ", "surrounding spaces"],
  ["2606:4700:4700::1111", "public IPv6"],
  ["2a00:1450:4001:82b::200e", "public IPv6"],
  ["[2606:4700::6810:84e5]", "public IPv6, bracketed"],
  ["2001:200::1", "first global block after 2001::/23"],
  ["::ffff:8.8.8.8", "IPv4-mapped public"],
  ["::ffff:808:808", "IPv4-mapped public in hex"],
  ["64:ff9b::8.8.8.8", "NAT64 of a public address"],
  ["2002:808:808::1", "6to4 of a public address"]
]

describe("isPublicAddress", () => {
  it.each(refused)("refuses %j (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(false)
  })

  it.each(allowed)("allows %j (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(true)
  })

  it("policies: public only, or any address for URL_CHECK_ALLOW_PRIVATE", () => {
    expect(publicAddressesOnly("127.0.0.1", 80)).toBe(false)
    expect(publicAddressesOnly("8.8.8.8", 443)).toBe(true)
    expect(anyAddress("127.0.0.1", 80)).toBe(true)
  })
})
