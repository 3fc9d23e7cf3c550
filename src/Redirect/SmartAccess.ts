import { Effect, Runtime } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Passwords } from "../Auth/Passwords.ts"
import { TokenSecret } from "../Auth/TokenStore.ts"
import { AppConfig } from "../Config.ts"
import { clientNetwork } from "../Platform/ClientIp.ts"
import { recordRedirect } from "../Platform/Metrics.ts"
import { botAgentTest } from "./BotAgent.ts"
import { ClickLimits, type ClickLimitsService } from "./ClickLimits.ts"
import { readForm } from "./FormBody.ts"
import { passwordPage, previewPage, sendPage } from "./HtmlPages.ts"
import type { LinkGates } from "./LinkGates.ts"
import { PasswordAttemptLimits } from "./PasswordAttemptLimits.ts"
import type { Attempt } from "./PasswordAttempts.ts"
import { type PasswordCookies, passwordCookies } from "./PasswordCookie.ts"

/** The answer of a password check: `busy` when the hashing threads refused the work. */
export type Verdict = "right" | "wrong" | "busy"

export interface SmartAccessDeps {
  readonly cookies: PasswordCookies
  readonly limits: ClickLimitsService
  /** argon2id verification on the hashing threads, for a client network. */
  readonly verify: (hash: string, password: string, network: string) => Promise<Verdict>
  readonly clientIp: (req: IncomingMessage) => string
  /** `PasswordAttemptLimits`: a try counted or refused, and a right answer's try given back. */
  readonly attempt: (linkId: number, network: string) => Promise<Attempt>
  readonly proven: (linkId: number, network: string, ticket: string) => Promise<void>
}

/** The services the gates use, taken once when the handler is built. */
export const smartAccessDeps = Effect.gen(function* () {
  const { trustProxy } = yield* AppConfig
  const passwords = yield* Passwords
  const secret = yield* TokenSecret
  const attempts = yield* PasswordAttemptLimits
  const run = Runtime.runPromise(yield* Effect.runtime<never>())
  const deps: SmartAccessDeps = {
    // The secret the service started with: instances sharing TOKEN_SECRET accept each other's passes.
    cookies: passwordCookies(secret.current()),
    limits: yield* ClickLimits,
    verify: (hash, password, network) =>
      Effect.runPromise(
        passwords.verify(hash, password, network).pipe(
          Effect.map((right): Verdict => (right ? "right" : "wrong")),
          Effect.catchTag("LoginsBusy", () => Effect.succeed<Verdict>("busy"))
        )
      ),
    clientIp: (req) => trustProxy.clientIp(req.socket.remoteAddress, req.headers["x-forwarded-for"]),
    attempt: (linkId, network) => run(attempts.attempt(linkId, network)),
    proven: (linkId, network, ticket) => run(attempts.proven(linkId, network, ticket))
  }
  return deps
})

/** The visitor reached what the gates guard, or was answered by them (`answered`), or is past the link's end (`expired`). */
export type Passage = "open" | "answered" | "expired"

const WRONG = "That password is not right. Try again."
const BUSY_SECONDS = 1

const isBotAgent = botAgentTest(10_000)

/**
 * The visitor side of password links, click limits, expiry and previews, for links that have gates.
 * Plain callbacks like the rest of the hot path: no Effect runs per request.
 */
export const makeSmartAccess = (deps: SmartAccessDeps) => {
  // Links whose archiving was asked for by this instance and not yet finished: one UPDATE each.
  const archiving = new Set<number>()
  const archive = (linkId: number) => {
    if (archiving.has(linkId)) return
    archiving.add(linkId)
    deps.limits.archive(linkId).then(
      () => archiving.delete(linkId),
      () => archiving.delete(linkId)
    )
  }

  const pageFor = (res: ServerResponse, status: number, html: string, head: boolean, extra?: Record<string, string>) => {
    sendPage(res, status, html, head, extra)
    recordRedirect(status)
  }

  return {
    /**
     * What a GET or HEAD meets before the destination: expiry, then the password form (to crawlers
     * and HEAD too), then, for a crawler, the preview page instead of the redirect.
     */
    pass: (req: IncomingMessage, res: ServerResponse, linkId: number, gates: LinkGates, destination: () => string): Passage => {
      const now = Date.now()
      if (gates.expiresAt !== null && now >= gates.expiresAt) {
        archive(linkId)
        return "expired"
      }
      const head = req.method === "HEAD"
      if (gates.password !== null && !deps.cookies.valid(req.headers.cookie, linkId, gates.password.version, now)) {
        pageFor(res, 200, passwordPage(undefined), head)
        return "answered"
      }
      if (gates.preview !== null && isBotAgent(req.headers["user-agent"])) {
        pageFor(res, 200, previewPage(gates.preview, gates.shortUrl, destination()), head)
        return "answered"
      }
      return "open"
    },

    /** Whether this request spends one of the link's `max_clicks`: human GETs only. */
    counts: (req: IncomingMessage, gates: LinkGates) => gates.maxClicks !== null && req.method === "GET" && !isBotAgent(req.headers["user-agent"]),

    /**
     * Takes one visit of a limited link, `true` at once when this instance's lease answers it;
     * archives the link with its last one. Rejects when the counter does not answer.
     */
    take: (linkId: number, maxClicks: number): true | Promise<boolean> => {
      const turn = deps.limits.visit(linkId, maxClicks)
      if (turn === "allowed") return true
      return turn.then((counted) => {
        if (counted !== "allowed") archive(linkId)
        return counted !== "exhausted"
      })
    },

    /** `POST /{alias}` of a password link: the form's answer. */
    answerForm: (req: IncomingMessage, res: ServerResponse, linkId: number, hash: string, version: string, secure: boolean, back: string) => {
      const network = clientNetwork(deps.clientIp(req))
      void deps.attempt(linkId, network).then(async (attempt) => {
        if (attempt._tag === "Refused") {
          req.resume()
          const wait = attempt.waitSeconds
          const message = attempt.by === "link" ? `Too many tries on this link. Try again in ${wait} seconds.` : `Too many tries. Try again in ${wait} seconds.`
          return pageFor(res, 503, passwordPage(message), false, { "retry-after": String(wait) })
        }
        const body = await readForm(req)
        if (body._tag === "TooLarge") return pageFor(res, 413, passwordPage("That answer is too long."), false, { connection: "close" })
        if (body._tag !== "Form") return pageFor(res, 400, passwordPage("Send the form's password field."), false)
        const password = body.fields.get("password") ?? ""
        const verdict = password === "" ? "wrong" : await deps.verify(hash, password, network)
        if (verdict === "busy") {
          return pageFor(res, 503, passwordPage("Too many visitors right now. Try again shortly."), false, { "retry-after": String(BUSY_SECONDS) })
        }
        if (verdict === "wrong") return pageFor(res, 403, passwordPage(WRONG), false)
        await deps.proven(linkId, network, attempt.ticket)
        res.writeHead(303, {
          location: back,
          "set-cookie": deps.cookies.issue(linkId, version, Date.now(), secure),
          "cache-control": "no-store"
        })
        res.end()
        recordRedirect(303)
      }).catch(() => {
        if (!res.headersSent) pageFor(res, 503, passwordPage("Try again shortly."), false, { "retry-after": String(BUSY_SECONDS) })
      })
    }
  }
}

export type SmartAccess = ReturnType<typeof makeSmartAccess>
