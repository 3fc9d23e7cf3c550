import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"

/** The Host header as a URL authority; "localhost" when there is none or it is not one ("a b", "["). */
const hostOf = (header: string | undefined): string => {
  if (header === undefined || header === "") return "localhost"
  try {
    return new URL(`http://${header}`).host || "localhost"
  } catch {
    return "localhost"
  }
}

/** The absolute URL of the request without its query: the `path` of pagination blocks. */
export const requestPath = (request: HttpServerRequest.HttpServerRequest): string => {
  const host = hostOf(request.headers["host"])
  const pathname = new URL(request.url, "http://x").pathname
  const proto = request.headers["x-forwarded-proto"] === "https" ? "https" : "http"
  return `${proto}://${host}${pathname}`
}

/** `links` of a paginated analytics answer: the request's full URL with `page` set to each page. */
export const pageLinks = (request: HttpServerRequest.HttpServerRequest, page: number, lastPage: number) => {
  const url = new URL(request.url, requestPath(request))
  const at = (n: number) => {
    url.searchParams.set("page", String(n))
    return url.toString()
  }
  return {
    first: at(1),
    last: at(lastPage),
    previous: page > 1 ? at(Math.min(page - 1, lastPage)) : null,
    next: page < lastPage ? at(page + 1) : null
  }
}

/**
 * Query or form parameters whose values logs never show: any whose name (percent-decoded, any case,
 * `[]` or a prefix around it) holds one of these words, so `password[]`, `api_key`, `client_secret`
 * and names we never heard of are caught as well as our own `access_token`.
 */
const CREDENTIAL_NAME = /password|passwd|secret|token|key|auth|signature/i

const isCredential = (rawName: string) => {
  let name = rawName
  try {
    name = decodeURIComponent(rawName.replaceAll("+", " "))
  } catch {
    // Not valid percent-encoding: compared as it is.
  }
  return CREDENTIAL_NAME.test(name)
}

/**
 * No route takes a secret in its path (ids are numbers, aliases at most 40 characters), so a longer
 * segment is a token sent where it does not belong (43 characters for ours): logs never show it.
 */
const MAX_SHOWN_SEGMENT = 40

const redactedPath = (path: string) =>
  path.length <= MAX_SHOWN_SEGMENT
    ? path
    : path
        .split("/")
        .map((segment) => (segment.length > MAX_SHOWN_SEGMENT ? "REDACTED" : segment))
        .join("/")

/**
 * A request target (`/path?query`) or URL as logs may show it: the value of every parameter whose
 * name holds password, passwd, secret, token, key, auth or signature (any case, percent-encoded or
 * not, pairs split on `&` or `;`) replaced by `REDACTED`, and in a request target (not an absolute
 * URL, whose path is a link's own target) each path segment longer than 40 characters; the rest
 * byte for byte.
 */
export const redactedTarget = (target: string): string => {
  const mark = target.indexOf("?")
  const path = mark === -1 ? target : target.slice(0, mark)
  const shownPath = path.startsWith("/") ? redactedPath(path) : path
  if (mark === -1) return shownPath
  const query = target.slice(mark + 1).replace(/[^&;]+/g, (pair) => {
    const equals = pair.indexOf("=")
    return equals !== -1 && isCredential(pair.slice(0, equals)) ? `${pair.slice(0, equals)}=REDACTED` : pair
  })
  return `${shownPath}?${query}`
}
