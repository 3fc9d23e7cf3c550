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

const CREDENTIAL_PARAMETERS = new Set(["access_token", "token", "password", "refresh_token"])

const isCredential = (rawName: string) => {
  let name = rawName
  try {
    name = decodeURIComponent(rawName.replaceAll("+", " "))
  } catch {
    // Not valid percent-encoding: compared as it is.
  }
  return CREDENTIAL_PARAMETERS.has(name.toLowerCase())
}

/**
 * A request target as logs may show it: the values of `access_token`, `token`, `password` and
 * `refresh_token` (any case, percent-encoded or not) replaced by `REDACTED`, the rest byte for byte.
 */
export const redactedTarget = (target: string): string => {
  const mark = target.indexOf("?")
  if (mark === -1) return target
  const pairs = target
    .slice(mark + 1)
    .split("&")
    .map((pair) => {
      const equals = pair.indexOf("=")
      return equals !== -1 && isCredential(pair.slice(0, equals)) ? `${pair.slice(0, equals)}=REDACTED` : pair
    })
  return `${target.slice(0, mark + 1)}${pairs.join("&")}`
}
