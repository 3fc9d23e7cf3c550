import { Clock, Context, Data, Effect, Layer, Option, Redacted } from "effect"
import nodemailer from "nodemailer"
import { AppConfig } from "../Config.ts"
import { backoffMillis, makeOutage } from "./Outage.ts"

export interface Mail {
  readonly to: string
  readonly subject: string
  readonly text: string
}

export class MailError extends Data.TaggedError("MailError")<{ readonly cause: unknown }> {}

const SEND_TIMEOUT_MS = 10_000

/** Outgoing e-mail: SMTP to `SMTP_URL` (smtp:// or smtps://) from `MAIL_FROM`, or the log when it is unset. */
export class Mailer extends Context.Tag("Mailer")<Mailer, { readonly send: (mail: Mail) => Effect.Effect<void, MailError> }>() {
  static readonly layer = Layer.scoped(
    Mailer,
    Effect.gen(function* () {
      const { smtpUrl, mailFrom } = yield* AppConfig
      if (Option.isNone(smtpUrl)) {
        return {
          send: (mail: Mail) =>
            Effect.logInfo("e-mail written to the log (no SMTP_URL)").pipe(
              Effect.annotateLogs({ to: mail.to, subject: mail.subject, text: mail.text })
            )
        }
      }
      // The socket gives up as soon as the send does, so a message is not delivered after its timeout.
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() =>
          nodemailer.createTransport(
            {
              url: Redacted.value(smtpUrl.value),
              connectionTimeout: SEND_TIMEOUT_MS,
              greetingTimeout: SEND_TIMEOUT_MS,
              socketTimeout: SEND_TIMEOUT_MS
            },
            { from: mailFrom }
          )
        ),
        (transport) => Effect.sync(() => transport.close())
      )
      // While the server fails, sends fail at once until the next attempt is due (5 s doubling to 5 min).
      const outage = makeOutage("smtp", "the SMTP server")
      let failures = 0
      let retryAt = 0
      const attempt = (mail: Mail) =>
        Effect.tryPromise({
          try: () => transport.sendMail({ to: mail.to, subject: mail.subject, text: mail.text }),
          catch: (cause) => new MailError({ cause })
        }).pipe(
          Effect.timeoutFail({ duration: SEND_TIMEOUT_MS, onTimeout: () => new MailError({ cause: new Error("timed out after 10 s") }) }),
          Effect.tapBoth({
            onFailure: (error) =>
              Effect.flatMap(Clock.currentTimeMillis, (now) => {
                // Sends that were under way together count as one failed attempt.
                if (now >= retryAt) {
                  failures++
                  retryAt = now + backoffMillis(failures)
                }
                return outage.failed(error.cause)
              }),
            onSuccess: () =>
              Effect.suspend(() => {
                failures = 0
                retryAt = 0
                return outage.succeeded
              })
          }),
          Effect.asVoid
        )
      const smtp = URL.canParse(Redacted.value(smtpUrl.value)) ? new URL(Redacted.value(smtpUrl.value)) : undefined
      const server =
        smtp === undefined ? {} : { "server.address": smtp.hostname, "server.port": Number(smtp.port || (smtp.protocol === "smtps:" ? 465 : 587)) }
      return {
        send: (mail: Mail) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const wait = retryAt - now
            return wait > 0
              ? Effect.fail(new MailError({ cause: new Error(`the SMTP server is unavailable; next attempt in ${Math.ceil(wait / 1000)} s`) }))
              : attempt(mail)
          }).pipe(
            Effect.withSpan("smtp send", {
              kind: "client",
              attributes: server
            })
          )
      }
    })
  )
}
