import type { HttpServerRequest } from "@effect/platform"

/** The absolute URL of the request without its query: the `path` of pagination blocks. */
export const requestPath = (request: HttpServerRequest.HttpServerRequest): string => {
  const host = request.headers["host"] ?? "localhost"
  const pathname = new URL(request.url, "http://x").pathname
  const proto = request.headers["x-forwarded-proto"] === "https" ? "https" : "http"
  return `${proto}://${host}${pathname}`
}
