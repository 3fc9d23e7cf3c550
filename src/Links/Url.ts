export const MAX_URL_LENGTH = 4096

/**
 * A host name as DNS can hold it: labels of at most 63 characters, at most 253 in all (a trailing
 * dot aside), counted in the parsed form (IDN labels as punycode). IP literals always fit.
 */
const fitsDns = (hostname: string) => {
  if (hostname.startsWith("[")) return true
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname
  return name.length <= 253 && name.split(".").every((label) => label.length <= 63)
}

/**
 * A full http(s) URL as stored and answered: the parsed, normalised `href`. Undefined for anything
 * else: other schemes, no host, a host DNS cannot hold, credentials, whitespace or control
 * characters, over 4096 characters.
 * With `assumeHttp`, an input without a scheme gets `http://` first.
 */
export const parseHttpUrl = (raw: string, options: { readonly assumeHttp: boolean }): string | undefined => {
  if (raw.length === 0 || raw.length > MAX_URL_LENGTH) return undefined
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) return undefined
  // "example.com:8080/x" has no scheme; "javascript:x" gets one and then fails as a host:port.
  const withScheme = options.assumeHttp && !raw.includes("://") ? `http://${raw}` : raw
  let url: URL
  try {
    url = new URL(withScheme)
  } catch {
    return undefined
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
  if (url.hostname === "" || url.username !== "" || url.password !== "" || !fitsDns(url.hostname)) return undefined
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(withScheme)) return undefined
  return url.href.length > MAX_URL_LENGTH ? undefined : url.href
}

const PERCENT_ESCAPE = /%[0-9a-f]{2}/i

/**
 * E5's `url`, which the specification calls URL-encoded while clients also send it plain. It is read
 * as given first, so a plain URL keeps its own escapes (`%2F` in a path); only a value that is no URL
 * as it stands and holds an escape is decoded, once, and read again.
 */
export const parseMaybeEncodedHttpUrl = (raw: string): string | undefined => {
  const plain = parseHttpUrl(raw, { assumeHttp: true })
  if (plain !== undefined || !PERCENT_ESCAPE.test(raw)) return plain
  let decoded: string
  try {
    decoded = decodeURIComponent(raw)
  } catch {
    return undefined
  }
  return parseHttpUrl(decoded, { assumeHttp: true })
}
