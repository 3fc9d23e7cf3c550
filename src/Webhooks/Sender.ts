import { Effect } from "effect"
import type { AddressPolicy } from "../Links/AddressPolicy.ts"
import { checkedTarget, requestTo, type Resolver, type Target } from "../Links/UrlChecker.ts"

const USER_AGENT = "link-shortener-webhooks/1"
const ADDRESS_NOT_ALLOWED = "address not allowed (private, loopback or reserved)"

/** How one POST went: the receiver's status (null when none came) and why it does not count as delivered. */
export interface SendOutcome {
  readonly status: number | null
  readonly error: string | null
}

const post = (target: Target, headers: Readonly<Record<string, string>>, body: string) =>
  Effect.async<SendOutcome>((resume) => {
    let settled = false
    const settle = (outcome: SendOutcome) => {
      if (settled) return
      settled = true
      resume(Effect.succeed(outcome))
    }
    const request = requestTo(
      target,
      "POST",
      { ...headers, "user-agent": USER_AGENT, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
      (response) => {
        response.on("error", () => undefined)
        const status = response.statusCode ?? 0
        const error =
          status >= 200 && status < 300
            ? null
            : status >= 300 && status < 400
              ? `HTTP ${status}: redirects are not followed`
              : `HTTP ${status}`
        settle({ status, error })
        response.destroy()
        request.destroy()
      }
    )
    request.on("error", (error) => settle({ status: null, error: error.message }))
    request.end(body)
    return Effect.sync(() => request.destroy())
  })

/**
 * One delivery attempt: a POST of `body` to `url`, connecting only to addresses the policy allows
 * (checked at each attempt, the connection pinned to them), never following a redirect, answered
 * within `timeoutMs`. Only a 2xx answer delivers. A client span `POST` with the receiver's host,
 * port and status.
 */
export const send = (
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  options: { readonly policy: AddressPolicy; readonly resolve: Resolver; readonly timeoutMs: number }
): Effect.Effect<SendOutcome> => {
  const parsed = new URL(url)
  return Effect.gen(function* () {
    const target = yield* checkedTarget(parsed, options.policy, options.resolve)
    return yield* post(target, headers, body)
  }).pipe(
    Effect.catchTags({
      // Not the address: the log would tell the webhook's admins what a name resolves to inside our network.
      AddressRefused: () => Effect.succeed<SendOutcome>({ status: null, error: ADDRESS_NOT_ALLOWED }),
      UrlUnreachable: (unreachable) => Effect.succeed<SendOutcome>({ status: null, error: unreachable.reason })
    }),
    Effect.timeoutTo({
      duration: options.timeoutMs,
      onSuccess: (outcome) => outcome,
      onTimeout: (): SendOutcome => ({ status: null, error: `no answer within ${options.timeoutMs / 1000} s` })
    }),
    Effect.tap(({ status, error }) =>
      Effect.annotateCurrentSpan({
        ...(status === null ? {} : { "http.response.status_code": status }),
        ...(error === null ? {} : { "error.type": status === null ? "no_answer" : String(status) })
      })
    ),
    // The URL's path and query may carry the receiver's credentials: the span names its host only.
    Effect.withSpan("POST", {
      kind: "client",
      attributes: { "http.request.method": "POST", "server.address": parsed.hostname, "server.port": Number(parsed.port || (parsed.protocol === "https:" ? 443 : 80)) }
    })
  )
}
