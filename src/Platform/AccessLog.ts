import { Effect } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { ProxyList } from "./ClientIp.ts"
import { redactedTarget } from "./RequestUrl.ts"

const milliseconds = (seconds: number) => Math.round(seconds * 10_000) / 10

/** What one access line tells of an API request. */
export interface ApiAccess {
  readonly method: string
  readonly url: string
  readonly route: string
  readonly status: number
  readonly seconds: number
  readonly requestId: string
  readonly client: string
  readonly userId: number | undefined
  /** Probes come every few seconds from every balancer: logged at debug, so that info shows traffic. */
  readonly probe: boolean
}

/** The access line of one API answer. */
export const apiAccessLine = (access: ApiAccess) =>
  (access.probe ? Effect.logDebug("Sent HTTP response") : Effect.logInfo("Sent HTTP response")).pipe(
    Effect.annotateLogs({
      "http.method": access.method,
      "http.url": redactedTarget(access.url),
      "http.route": access.route,
      "http.status": access.status,
      "http.duration_ms": milliseconds(access.seconds),
      "request.id": access.requestId,
      "client.address": access.client,
      ...(access.userId === undefined ? {} : { "user.id": access.userId })
    })
  )

/** The debug line of one answer of the redirect handler. */
export const redirectLine = (request: IncomingMessage, response: ServerResponse, seconds: number, proxies: ProxyList) => {
  const location = response.getHeader("location")
  return Effect.logDebug("Sent redirect").pipe(
    Effect.annotateLogs({
      "http.method": request.method ?? "",
      "http.host": request.headers.host ?? "",
      "http.url": redactedTarget(request.url ?? "/"),
      "http.status": response.statusCode,
      "http.duration_ms": milliseconds(seconds),
      "client.address": proxies.clientIp(request.socket.remoteAddress, request.headers["x-forwarded-for"]),
      // The visitor's query is passed on to the target, credentials a visitor put there included.
      ...(typeof location === "string" ? { "http.location": redactedTarget(location) } : {})
    })
  )
}
