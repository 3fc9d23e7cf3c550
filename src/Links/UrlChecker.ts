import { Context, Data, Effect, Either, Layer } from "effect"
import { lookup } from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { AppConfig } from "../Config.ts"
import { redactedTarget } from "../Platform/RequestUrl.ts"
import { type AddressPolicy, anyAddress, publicAddressesOnly } from "./AddressPolicy.ts"

/**
 * The answer of the 404 check (skipped with E4's `override_404_check: 1`):
 * - `not_found`: the last hop answered 404 or 410, the only definite "this link is dead";
 * - `forbidden`: the URL, or a redirect on the way, leads to an address the policy refuses
 *   (loopback, private, link-local…); nothing was sent there;
 * - `ok`: anything else, including every network error, timeout and redirect loop.
 */
export type UrlCheckResult = "ok" | "not_found" | "forbidden"

/** The check got no definite answer: DNS or network failure, timeout, too many redirects. */
export class UrlUnreachable extends Data.TaggedError("UrlUnreachable")<{
  readonly url: string
  readonly reason: string
}> {}

/** The URL, or a redirect on the way, leads to an address the policy refuses. */
export class AddressRefused extends Data.TaggedError("AddressRefused")<{
  readonly url: string
  readonly address: string
}> {}

/** The addresses of a host name, in the order to try them. */
export type Resolver = (hostname: string) => Effect.Effect<ReadonlyArray<string>, UrlUnreachable>

export interface UrlCheckerOptions {
  /** URL_CHECK_ALLOW_PRIVATE: connect to any address. */
  readonly allowPrivate: boolean
  /** The budget of a whole check, redirects and DNS included. */
  readonly timeoutMs?: number
  readonly maxRedirects?: number
  /** Replaces the system resolver (tests). */
  readonly resolve?: Resolver
  /** Replaces the policy that `allowPrivate` chooses (tests). */
  readonly policy?: AddressPolicy
}

export interface UrlCheckerService {
  readonly check: (url: string) => Effect.Effect<UrlCheckResult>
  /**
   * The first `maxBytes` of the HTML page at `url` (GET, redirects followed), under the same address
   * policy and time budget as the check; `undefined` for anything else, refused or unreachable.
   */
  readonly html: (url: string, maxBytes: number) => Effect.Effect<string | undefined>
}

export const DEFAULT_TIMEOUT_MS = 3000
export const DEFAULT_MAX_REDIRECTS = 5
const USER_AGENT = "link-shortener-url-check/1 (checks that a shortened link exists)"
/** Node's default, pinned so that a larger --max-http-header-size for the API does not apply here. */
const MAX_HEADER_BYTES = 16 * 1024
const REDIRECTS = new Set([301, 302, 303, 307, 308])
/** `localhost` and `*.localhost` are loopback whatever DNS says (RFC 6761 §6.3), with or without the final dot. */
const LOOPBACK_NAME = /^(?:[^.]+\.)*localhost\.?$/i
const LOOPBACK = ["127.0.0.1", "::1"]

/** `dns.lookup` with every address, as the operating system resolves names for any other program. */
export const systemResolver: Resolver = (hostname) =>
  Effect.async<ReadonlyArray<string>, UrlUnreachable>((resume) => {
    lookup(hostname, { all: true }, (error, addresses) => {
      resume(
        error === null
          ? Effect.succeed(addresses.map((entry) => entry.address))
          : Effect.fail(new UrlUnreachable({ url: hostname, reason: `DNS: ${error.code ?? error.message}` }))
      )
    })
  })

/** One hop: where to send the request, and the checked addresses it may connect to. */
export interface Target {
  readonly url: URL
  readonly host: string
  readonly port: number
  readonly addresses: ReadonlyArray<string>
}

interface Answer {
  readonly status: number
  readonly location: string | undefined
  /** The start of an HTML body, when one was asked for and the answer is a 200 `text/html`. */
  readonly html?: string
}

/**
 * Hands Node the addresses that were checked, whatever name it asks for: the connection goes to an
 * address the policy saw, and a DNS answer that changes between check and connect is never used.
 */
const pinnedLookup =
  (addresses: ReadonlyArray<string>): LookupFunction =>
  (_hostname, options, callback) => {
    if (options.all === true) callback(null, addresses.map((address) => ({ address, family: isIP(address) })))
    else callback(null, addresses[0]!, isIP(addresses[0]!))
  }

/** The policy URL_CHECK_ALLOW_PRIVATE chooses: public addresses only unless it is true. */
export const policyOf = (allowPrivate: boolean): AddressPolicy => (allowPrivate ? anyAddress : publicAddressesOnly)

/**
 * Where a request to `url` may connect: its addresses, each allowed by the policy. WHATWG URL has
 * already written every IPv4 spelling (127.1, 2130706433, 0x7f000001, 0177.0.0.1) as a dotted quad
 * and IPv6 canonically, so a literal host is checked as the address it is.
 */
export const checkedTarget = (url: URL, policy: AddressPolicy, resolve: Resolver): Effect.Effect<Target, UrlUnreachable | AddressRefused> =>
  Effect.gen(function* () {
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
    const port = url.port === "" ? defaultPort(url) : Number(url.port)
    const addresses = isIP(host) !== 0 ? [host] : LOOPBACK_NAME.test(host) ? LOOPBACK : yield* resolve(host)
    if (addresses.length === 0) return yield* new UrlUnreachable({ url: url.href, reason: "DNS: no address" })
    const refused = addresses.find((address) => isIP(address) === 0 || !policy(address, port))
    if (refused !== undefined) return yield* new AddressRefused({ url: url.href, address: refused })
    return { url, host, port, addresses }
  })

/**
 * A request to a checked target: it connects only to the target's addresses, over a connection of its
 * own (no pooled socket: each is destroyed once the answer's headers are in).
 */
export const requestTo = (
  target: Target,
  method: string,
  headers: Readonly<Record<string, string>>,
  onResponse: (response: http.IncomingMessage) => void
): http.ClientRequest =>
  (target.url.protocol === "https:" ? https : http).request(
    {
      method,
      hostname: target.host,
      port: target.port,
      path: `${target.url.pathname}${target.url.search}`,
      headers,
      lookup: pinnedLookup(target.addresses),
      agent: false,
      maxHeaderSize: MAX_HEADER_BYTES,
      ...(isIP(target.host) === 0 ? { servername: target.host.replace(/\.$/, "") } : {})
    },
    onResponse
  )

/** Sends one request and keeps only the status and `Location`, and up to `htmlBytes` of an HTML body. */
const send = (target: Target, method: "HEAD" | "GET", htmlBytes = 0): Effect.Effect<Answer, UrlUnreachable> =>
  Effect.async<Answer, UrlUnreachable>((resume) => {
    let settled = false
    const settle = (result: Effect.Effect<Answer, UrlUnreachable>) => {
      if (settled) return
      settled = true
      resume(result)
    }
    const request = requestTo(target, method, { "user-agent": USER_AGENT, accept: "*/*" }, (response) => {
      response.on("error", () => undefined)
      const location = response.headers.location
      const status = response.statusCode ?? 0
      const html = htmlBytes > 0 && status === 200 && /^text\/html\b/i.test(response.headers["content-type"] ?? "")
      if (!html) {
        settle(Effect.succeed({ status, location }))
        response.destroy()
        request.destroy()
        return
      }
      const chunks: Array<Buffer> = []
      let size = 0
      const done = () => {
        settle(Effect.succeed({ status, location, html: Buffer.concat(chunks).subarray(0, htmlBytes).toString("utf8") }))
        response.destroy()
        request.destroy()
      }
      response.on("data", (chunk: Buffer) => {
        chunks.push(chunk)
        size += chunk.length
        if (size >= htmlBytes) done()
      })
      response.on("end", done)
    })
    request.on("error", (error) =>
      settle(Effect.fail(new UrlUnreachable({ url: target.url.href, reason: `${method}: ${error.message}` })))
    )
    request.end()
    return Effect.sync(() => request.destroy())
  }).pipe(
    Effect.tap((answer) => Effect.annotateCurrentSpan("http.response.status_code", answer.status)),
    Effect.withSpan(method, {
      kind: "client",
      attributes: {
        "http.request.method": method,
        "url.full": target.url.href,
        "server.address": target.host,
        "server.port": target.port,
        "network.peer.address": target.addresses[0]
      }
    })
  )

const defaultPort = (url: URL) => (url.protocol === "https:" ? 443 : 80)

/** The next URL of a redirect, when it is one that can be followed. */
const redirectTarget = (from: URL, answer: Answer): URL | undefined => {
  if (!REDIRECTS.has(answer.status) || answer.location === undefined) return undefined
  try {
    const next = new URL(answer.location, from)
    return next.protocol === "http:" || next.protocol === "https:" ? next : undefined
  } catch {
    return undefined
  }
}

const parseUrl = (raw: string): URL | undefined => {
  try {
    const url = new URL(raw)
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined
  } catch {
    return undefined
  }
}

/** A checker with explicit settings: the live layer and tests build theirs here. */
const make = (options: UrlCheckerOptions): UrlCheckerService => {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS
  const resolve = options.resolve ?? systemResolver
  const policy = options.policy ?? policyOf(options.allowPrivate)

  const target = (url: URL) => checkedTarget(url, policy, resolve)

  /** HEAD, and GET when HEAD is not allowed, not implemented or fails. */
  const hop = (url: URL) =>
    Effect.gen(function* () {
      const checked = yield* target(url)
      const head = yield* Effect.either(send(checked, "HEAD"))
      if (Either.isRight(head) && head.right.status !== 405 && head.right.status !== 501) return head.right
      return yield* send(checked, "GET")
    })

  const follow = (start: URL): Effect.Effect<UrlCheckResult, UrlUnreachable | AddressRefused> =>
    Effect.gen(function* () {
      let url = start
      for (let redirects = 0; ; redirects++) {
        const answer = yield* hop(url)
        if (answer.status === 404 || answer.status === 410) return "not_found"
        const next = redirectTarget(url, answer)
        if (next === undefined) return "ok"
        if (redirects >= maxRedirects) {
          return yield* new UrlUnreachable({ url: url.href, reason: `more than ${maxRedirects} redirects` })
        }
        url = next
      }
    })

  const fetchHtml = (start: URL, maxBytes: number): Effect.Effect<string | undefined, UrlUnreachable | AddressRefused> =>
    Effect.gen(function* () {
      let url = start
      for (let redirects = 0; redirects <= maxRedirects; redirects++) {
        const answer = yield* send(yield* target(url), "GET", maxBytes)
        if (answer.html !== undefined) return answer.html
        const next = redirectTarget(url, answer)
        if (next === undefined) return undefined
        url = next
      }
      return undefined
    })

  return {
    html: (raw, maxBytes) =>
      Effect.suspend(() => {
        const url = parseUrl(raw)
        if (url === undefined) return Effect.succeed(undefined)
        return fetchHtml(url, maxBytes).pipe(
          Effect.timeoutFail({
            duration: timeoutMs,
            onTimeout: () => new UrlUnreachable({ url: raw, reason: `no answer within ${timeoutMs} ms` })
          }),
          Effect.catchAll((error) =>
            Effect.logDebug("preview tags not fetched", error._tag).pipe(Effect.annotateLogs("url", redactedTarget(error.url)), Effect.as(undefined))
          ),
          Effect.withSpan("preview_fetch", { attributes: { "url.full": url.href } })
        )
      }),
    check: (raw) =>
      Effect.suspend(() => {
        const url = parseUrl(raw)
        if (url === undefined) return Effect.succeed<UrlCheckResult>("ok")
        return follow(url).pipe(
          Effect.timeoutFail({
            duration: timeoutMs,
            onTimeout: () => new UrlUnreachable({ url: raw, reason: `no answer within ${timeoutMs} ms` })
          }),
          Effect.catchTags({
            UrlUnreachable: (error) =>
              Effect.logDebug("URL check inconclusive", error.reason).pipe(
                Effect.annotateLogs("url", redactedTarget(error.url)),
                Effect.as<UrlCheckResult>("ok")
              ),
            AddressRefused: (error) =>
              Effect.logInfo("URL check refused an address", error.address).pipe(
                Effect.annotateLogs("url", redactedTarget(error.url)),
                Effect.as<UrlCheckResult>("forbidden")
              )
          }),
          Effect.tap((result) => Effect.annotateCurrentSpan("url_check.result", result)),
          Effect.withSpan("url_check", { attributes: { "url.full": url.href } })
        )
      })
  }
}

/** The 404 check of new links; see {@link UrlCheckResult}. */
export class UrlChecker extends Context.Tag("UrlChecker")<UrlChecker, UrlCheckerService>() {
  static readonly make = make
  static readonly layerWith = (options: UrlCheckerOptions) => Layer.succeed(UrlChecker, make(options))
  /** Public addresses only, unless URL_CHECK_ALLOW_PRIVATE=true. */
  static readonly layer = Layer.effect(
    UrlChecker,
    Effect.map(AppConfig, (config) => make({ allowPrivate: config.urlCheckAllowPrivate }))
  )
}
