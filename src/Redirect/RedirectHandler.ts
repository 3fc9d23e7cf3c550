import { Context, Effect, Layer } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { AppConfig } from "../Config.ts"
import { MAX_ALIAS_LENGTH } from "../Links/Alias.ts"
import { ApiError } from "../Platform/ApiError.ts"
import { ClickLog } from "../Clicks/ClickLog.ts"
import type { PreHandler } from "../Platform/NodeServer.ts"
import { recordRedirect, recordRedirectCacheHit, recordRedirectCacheMiss } from "../Platform/Metrics.ts"
import { registerCollector } from "../Platform/Collectors.ts"
import { redirectCacheFamilies } from "../Platform/CacheMetrics.ts"
import {
  type DomainEntry,
  type LinkEntry,
  makeRedirectCache,
  redirectCacheDefaults,
  type RedirectCacheOptions,
  redirectHeaders
} from "./RedirectCache.ts"
import { makeSmartAccess, smartAccessDeps } from "./SmartAccess.ts"
import type { LinkGates } from "./LinkGates.ts"

/** Paths of the API on every host: probes of a balancer may name any. */
const PROBE_PATHS = new Set(["/healthz", "/readyz"])
/** The API's pages served on the API host only: on a short domain they are aliases like any other path. */
const API_HOST_ONLY = new Set(["/api/docs", "/api/v3/docs", "/api/v4/docs", "/api/v4/openapi.json", "/api/v3/openapi.json"])
const ALIAS = /^[A-Za-z0-9._-]+$/
const DOTS_ONLY = /^\.+$/
const UNAVAILABLE = JSON.stringify({ errors: [ApiError.item(10902)] })

/** The host of a Host header: lower case, without port or trailing dot. */
const hostOf = (header: string | undefined) => {
  if (header === undefined || header === "") return undefined
  const bracket = header.lastIndexOf("]")
  const colon = header.lastIndexOf(":")
  let host = (colon > bracket ? header.slice(0, colon) : header).toLowerCase()
  if (host.endsWith(".")) host = host.slice(0, -1)
  return host
}

/** The alias a path names (one segment, one trailing slash allowed), lower-cased; undefined if none can. */
const aliasOf = (path: string) => {
  const end = path.length > 2 && path.endsWith("/") ? path.length - 1 : path.length
  const alias = path.slice(1, end)
  return alias.length <= MAX_ALIAS_LENGTH && ALIAS.test(alias) && !DOTS_ONLY.test(alias) ? alias.toLowerCase() : undefined
}

/**
 * The link's URL with the visitor's query parameters added after its own (the link's win on a name
 * clash); `qr` is ours and never forwarded. The link's own query is kept byte for byte.
 */
const withVisitorQuery = (target: string, visitorQuery: URLSearchParams) => {
  visitorQuery.delete("qr")
  if (visitorQuery.size === 0) return target
  const url = new URL(target)
  const own = url.searchParams
  const extra = new URLSearchParams()
  for (const [name, value] of visitorQuery) if (!own.has(name)) extra.append(name, value)
  if (extra.size === 0) return target
  const hash = url.hash
  url.hash = ""
  return `${url.href}${url.search === "" ? "?" : "&"}${extra.toString()}${hash}`
}

const redirectWith = (res: ServerResponse, status: number, headers: Array<string>) => {
  res.writeHead(status, headers)
  res.end()
  recordRedirect(status)
}

const redirect = (res: ServerResponse, status: number, location: string) => redirectWith(res, status, ["location", location])

const notFound = (res: ServerResponse) => {
  res.writeHead(404, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" })
  res.end("Not Found\n")
  recordRedirect(404)
}

/** Where an unknown or deleted alias goes: the domain's url_404 (302), else a plain 404. */
const unknownAlias = (res: ServerResponse, domain: DomainEntry) =>
  domain.url404 === null ? notFound(res) : redirect(res, 302, domain.url404)

/** Where the root and archived links go: the domain's homepage (302), else a plain 404. */
const homepage = (res: ServerResponse, domain: DomainEntry) =>
  domain.homepage === null ? notFound(res) : redirect(res, 302, domain.homepage)

/** Where an expired or used-up link goes: its `expired_url`, else where archived links go. */
const expired = (res: ServerResponse, domain: DomainEntry, gates: LinkGates | undefined) =>
  gates?.expiredUrl == null ? homepage(res, domain) : redirect(res, 302, gates.expiredUrl)

const methodNotAllowed = (res: ServerResponse) => {
  res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" })
  res.end("Method Not Allowed\n")
  recordRedirect(405)
}

const unavailable = (res: ServerResponse) => {
  if (res.headersSent) return
  res.writeHead(503, { "content-type": "application/json", "retry-after": "1" })
  res.end(UNAVAILABLE)
  recordRedirect(503)
}

export interface RedirectHandlerService {
  /** Answers the request if its Host is a registered domain and its path is not the API's; tells whether it did. */
  readonly handle: PreHandler
}

/**
 * The hot path: plain `node:http`, answers from the in-process caches,
 * one indexed query on a miss, and the click handed to `ClickLog` without waiting for anything.
 */
export class RedirectHandler extends Context.Tag("RedirectHandler")<RedirectHandler, RedirectHandlerService>() {
  static readonly layerWith = (options: RedirectCacheOptions) =>
    Layer.scoped(
      RedirectHandler,
      Effect.gen(function* () {
        const { trustProxy } = yield* AppConfig
        const clicks = yield* ClickLog
        const cache = yield* makeRedirectCache(options)
        const access = makeSmartAccess(yield* smartAccessDeps)
        yield* registerCollector("redirect_cache", () => redirectCacheFamilies(cache.sizes()))

        const answer = (req: IncomingMessage, res: ServerResponse, domain: DomainEntry, link: LinkEntry | null, path: string, query: string) => {
          const gates = link?.gates
          if (req.method === "POST") {
            if (link?.active !== true || gates?.password == null) return methodNotAllowed(res)
            const back = query === "" ? path : `${path}?${query}`
            return access.answerForm(req, res, link.id, gates.password.hash, gates.password.version, domain.hasSsl, back)
          }
          if (link === null) return unknownAlias(res, domain)
          if (!link.active) return expired(res, domain, gates)
          let ip: string | undefined
          let target = link.redirectUrl
          let targetHeaders = link.headers
          let destinationId: number | null = null
          if (link.smart !== undefined) {
            ip = trustProxy.clientIp(req.socket.remoteAddress, req.headers["x-forwarded-for"])
            const chosen = link.smart.choose({ headers: req.headers, ip, query })
            if (chosen !== undefined) {
              target = chosen.url
              targetHeaders = chosen.headers
              destinationId = chosen.id
            }
          }
          let location = target
          let qr = false
          if (query !== "") {
            const visitor = new URLSearchParams(query)
            qr = visitor.get("qr") === "1"
            try {
              location = withVisitorQuery(target, visitor)
            } catch {
              location = target
            }
          }
          const headers = location === target ? targetHeaders : redirectHeaders(location, gates !== undefined)
          if (gates !== undefined) {
            const destination = location
            const passage = access.pass(req, res, link.id, gates, () => destination)
            if (passage === "expired") return expired(res, domain, gates)
            if (passage === "answered") return
            if (gates.maxClicks !== null && access.counts(req, gates)) {
              const taken = access.take(link.id, gates.maxClicks)
              if (taken === true) return admit(req, res, domain, link, headers, qr, destinationId, ip)
              taken.then(
                (allowed) => (allowed ? admit(req, res, domain, link, headers, qr, destinationId, ip) : expired(res, domain, gates)),
                () => unavailable(res)
              )
              return
            }
          }
          admit(req, res, domain, link, headers, qr, destinationId, ip)
        }

        /** The redirect (its headers made), and its click (`ip` when the link's rules needed it already). */
        const admit = (
          req: IncomingMessage,
          res: ServerResponse,
          domain: DomainEntry,
          link: LinkEntry,
          headers: Array<string>,
          qr: boolean,
          destinationId: number | null,
          ip: string | undefined
        ) => {
          redirectWith(res, link.redirectType, headers)
          if (req.method !== "GET") return
          clicks.enqueue({
            at: Date.now(),
            linkId: link.id,
            domainId: domain.id,
            ip: ip ?? trustProxy.clientIp(req.socket.remoteAddress, req.headers["x-forwarded-for"]),
            userAgent: req.headers["user-agent"],
            referer: req.headers.referer,
            qr,
            destinationId
          })
        }

        const route = (req: IncomingMessage, res: ServerResponse, host: string): boolean => {
          const domain = cache.domain(host)
          if (domain === undefined) return false
          const url = req.url ?? "/"
          const mark = url.indexOf("?")
          const path = mark === -1 ? url : url.slice(0, mark)
          if (((path === "/api" || path.startsWith("/api/")) && !API_HOST_ONLY.has(path)) || PROBE_PATHS.has(path)) return false
          // POST is the password form's answer; which links take it is known once the link is.
          if (req.method !== "GET" && req.method !== "HEAD" && req.method !== "POST") {
            methodNotAllowed(res)
            return true
          }
          if (!domain.active) {
            notFound(res)
            return true
          }
          if (path === "/") {
            if (req.method === "POST") methodNotAllowed(res)
            else homepage(res, domain)
            return true
          }
          const alias = aliasOf(path)
          if (alias === undefined) {
            if (req.method === "POST") methodNotAllowed(res)
            else unknownAlias(res, domain)
            return true
          }
          const query = mark === -1 ? "" : url.slice(mark + 1)
          const cached = cache.cached(domain.id, alias)
          if (cached !== undefined) {
            recordRedirectCacheHit()
            answer(req, res, domain, cached, path, query)
            return true
          }
          recordRedirectCacheMiss()
          cache.load(domain.id, alias).then(
            (link) => answer(req, res, domain, link, path, query),
            () => unavailable(res)
          )
          return true
        }

        const handle = (
          req: IncomingMessage,
          res: ServerResponse,
          toApi: (req: IncomingMessage, res: ServerResponse) => void
        ): boolean => {
          const host = hostOf(req.headers.host)
          if (host === undefined) return false
          const loading = cache.domainLoading(host)
          if (loading === undefined) return route(req, res, host)
          void loading.then(() => {
            if (!route(req, res, host)) toApi(req, res)
          })
          return true
        }

        return { handle }
      })
    )
  /** With the caches the service runs with. */
  static readonly layer = this.layerWith(redirectCacheDefaults)
}
