export const MAX_URL_LENGTH = 4096

/**
 * A full http(s) URL as stored and answered: the parsed, normalised `href`. Undefined for anything
 * else: other schemes, no host, credentials, whitespace or control characters, over 4096 characters.
 * With `assumeHttp`, an input without a scheme gets `http://` first (CONTRACT §6).
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
  if (url.hostname === "" || url.username !== "" || url.password !== "") return undefined
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(withScheme)) return undefined
  return url.href.length > MAX_URL_LENGTH ? undefined : url.href
}
