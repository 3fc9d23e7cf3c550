import { Context, Data, Effect, Layer, Option, Redacted } from "effect"
import nodemailer from "nodemailer"
import { AppConfig } from "../Config.ts"

export interface Mail {
  readonly to: string
  readonly subject: string
  readonly text: string
}

export class MailError extends Data.TaggedError("MailError")<{ readonly cause: unknown }> {}

const SEND_TIMEOUT_MS = 10_000

/** Outgoing e-mail: SMTP when `SMTP_URL` is set, otherwise the log (CONTRACT §12). */
export class Mailer extends Context.Tag("Mailer")<
  Mailer,
  { readonly send: (mail: Mail) => Effect.Effect<void, MailError> }
>() {
  static readonly Live = Layer.scoped(
    Mailer,
    Effect.gen(function* () {
      const config = yield* AppConfig
      const smtpUrl = config.smtpUrl
      if (Option.isNone(smtpUrl)) {
        return {
          send: (mail: Mail) =>
            Effect.logInfo("e-mail (no SMTP_URL: written to the log)").pipe(
              Effect.annotateLogs({ to: mail.to, subject: mail.subject, text: mail.text })
            )
        }
      }
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() => nodemailer.createTransport(Redacted.value(smtpUrl.value))),
        (transport) => Effect.sync(() => transport.close())
      )
      return {
        send: (mail: Mail) =>
          Effect.tryPromise({
            try: () => transport.sendMail({ from: config.mailFrom, to: mail.to, subject: mail.subject, text: mail.text }),
            catch: (cause) => new MailError({ cause })
          }).pipe(
            Effect.timeoutFail({ duration: SEND_TIMEOUT_MS, onTimeout: () => new MailError({ cause: "timed out" }) }),
            Effect.asVoid
          )
      }
    })
  )
}
