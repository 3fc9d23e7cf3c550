import { domainToASCII } from "node:url"

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/**
 * A short domain's name as stored: lower case, IDN as punycode, at least two labels, not an IP
 * address. Undefined when it is not a valid host name.
 */
export const normaliseDomainName = (raw: string): string | undefined => {
  const trimmed = raw.trim().replace(/\.$/, "")
  if (trimmed === "" || trimmed.length > 253 || /[\s/:@?#\\]/.test(trimmed)) return undefined
  const ascii = domainToASCII(trimmed.toLowerCase())
  if (ascii === "" || ascii.length > 253) return undefined
  const labels = ascii.split(".")
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return undefined
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return undefined
  return ascii
}
