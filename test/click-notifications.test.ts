import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Fiber, HashMap, Layer, Logger, LogLevel, TestClock, TestContext } from "effect"
import { mkdtempSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SMTPServer } from "smtp-server"
import { coreLayer } from "../src/App.ts"
import { AppConfig } from "../src/Config.ts"
import { Accounts } from "../src/Accounts/Accounts.ts"
import { ClickNotifier } from "../src/Clicks/ClickNotifier.ts"
import { ClickRepo } from "../src/Clicks/ClickRepo.ts"
import { Mailer } from "../src/Platform/Mailer.ts"
import { uniqueDomainName } from "./support/Fixtures.ts"
import { PASSWORD } from "./support/Http.ts"
import { makeTestDatabase } from "./support/TestDatabase.ts"

const FROM = "links@sho.rt"
const START = Date.UTC(2030, 0, 1)

interface Received {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly text: string
}

const decodeQuotedPrintable = (body: string) =>
  Buffer.from(
    body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    "latin1"
  ).toString("utf8")

/** Subject and plain-text body of a single-part message as it came over SMTP. */
const parseMessage = (raw: string) => {
  const split = raw.indexOf("\r\n\r\n")
  const headers = raw.slice(0, split).replace(/\r\n(?=[ \t])/g, "").split("\r\n")
  const header = (name: string) =>
    headers.find((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))?.slice(name.length + 1).trim() ?? ""
  const body = raw.slice(split + 4)
  const text = /quoted-printable/i.test(header("Content-Transfer-Encoding")) ? decodeQuotedPrintable(body) : body
  return { subject: header("Subject"), text: text.replace(/\r\n/g, "\n") }
}

/** `held` set: the server takes each message but never answers it (the callbacks wait there). */
const listen = (port: number, received: Array<Received>, held?: Array<(error: Error) => void>) =>
  Effect.async<SMTPServer, Error>((resume) => {
    const server = new SMTPServer({
      authOptional: true,
      // nodemailer would upgrade to TLS when offered, and refuse the server's self-signed certificate.
      disabledCommands: ["STARTTLS"],
      onData(stream, session, callback) {
        const chunks: Array<Buffer> = []
        stream.on("data", (chunk: Buffer) => chunks.push(chunk))
        stream.on("end", () => {
          if (held !== undefined) return void held.push(callback)
          received.push({
            from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            ...parseMessage(Buffer.concat(chunks).toString("utf8"))
          })
          callback()
        })
      }
    })
    let listening = false
    server.on("error", (error) => {
      if (!listening) resume(Effect.fail(error))
    })
    server.listen(port, "127.0.0.1", () => {
      listening = true
      resume(Effect.succeed(server))
    })
  })

/**
 * A real SMTP server on a free local port, keeping every message; it can be stopped and started again
 * on that port. When `silent`, it reads each message and never answers.
 */
const smtpServer = (options: { readonly silent: boolean } = { silent: false }) =>
  Effect.gen(function* () {
    const received: Array<Received> = []
    const held: Array<(error: Error) => void> = []
    const heldOrNot = options.silent ? held : undefined
    let server: SMTPServer | undefined = yield* listen(0, received, heldOrNot)
    const port = (server.server.address() as AddressInfo).port
    const stop = Effect.promise(
      () =>
        new Promise<void>((resolve) => {
          const running = server
          server = undefined
          for (const callback of held.splice(0)) callback(new Error("shutting down"))
          if (running === undefined) resolve()
          else running.close(() => resolve())
        })
    )
    const start = Effect.map(listen(port, received, heldOrNot), (started) => {
      server = started
    })
    yield* Effect.addFinalizer(() => stop)
    return { url: `smtp://127.0.0.1:${port}`, received, held: () => held.length, stop, start: Effect.orDie(start) }
  })

type Smtp = Effect.Effect.Success<ReturnType<typeof smtpServer>>

/** Waits, in real time, until the condition holds. */
const until = (condition: () => boolean) =>
  Effect.promise(async () => {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10))
  })

const mailsTo = (smtp: Smtp, email: string) => smtp.received.filter((mail) => mail.to.includes(email))

const countOf = (mail: Received) => Number(/: (\d+) new clicks?$/.exec(mail.subject)?.[1])

/** One service instance's click e-mail counts and notifier over the test database, with its own Mailer.layer: SMTP to `smtpUrl`, else the log. */
const instance = (smtpUrl?: string) =>
  Layer.build(
    ClickNotifier.Default.pipe(
      Layer.provide(Mailer.layer),
      Layer.provide(AppConfig.layerFromMap(smtpUrl === undefined ? {} : { SMTP_URL: smtpUrl, MAIL_FROM: FROM })),
      Layer.merge(ClickRepo.Default)
    )
  ).pipe(
    Effect.map((context) => ({
      record: Context.get(context, ClickRepo).recordNotifications,
      sendDue: Context.get(context, ClickNotifier).sendDue
    }))
  )

let serial = 0

/** A user of a new account with a domain of theirs (with or without SSL), written directly. */
const owner = (options: { readonly ssl: boolean }) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    const account = yield* accounts.createAccount({ name: "clicks", plan: "enterprise", linkQuota: null })
    const email = `owner${++serial}.${Date.now()}@example.com`
    const user = yield* accounts.createUser({ accountId: account.id, email, password: PASSWORD, role: "account_admin" })
    const sql = yield* SqlClient.SqlClient
    const domain = uniqueDomainName("n")
    const [row] = yield* sql<{ id: number }>`
      INSERT INTO domains (account_id, domain, has_ssl) VALUES (${account.id}, ${domain}, ${options.ssl}) RETURNING id`
    return { userId: user.user_id, email, domain, domainId: row!.id }
  }).pipe(Effect.orDie)

type Owner = Effect.Effect.Success<ReturnType<typeof owner>>

const longUrl = (alias: string) => `https://example.com/long/${alias}`

const newLink = (o: Owner, alias: string, notify: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: number }>`
        INSERT INTO links (domain_id, user_id, url, alias, redirect_url, notify_on_click)
        VALUES (${o.domainId}, ${o.userId}, ${longUrl(alias)}, ${alias}, ${longUrl(alias)}, ${notify}) RETURNING id`,
      (rows) => rows[0]!.id
    )
  ).pipe(Effect.orDie)

const notificationRow = (linkId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ pending: number; last_sent: number | null }>`
        SELECT pending, floor(extract(epoch FROM last_sent))::int8 AS last_sent FROM click_notifications WHERE link_id = ${linkId}`,
      (rows) => rows[0]
    )
  ).pipe(Effect.orDie)

const seconds = (millis: number) => Math.floor(millis / 1000)

/** sendDue covers every link: what an earlier failed test left pending must not count in the next. */
const nothingPending = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE click_notifications SET pending = 0`).pipe(
  Effect.orDie
)

/** Nothing left pending, an SMTP server (`silent`: one that never answers), a notifier sending through it and a domain's owner. */
const mailing = (options: { readonly ssl: boolean; readonly silent?: boolean }) =>
  Effect.gen(function* () {
    yield* nothingPending
    const smtp = yield* smtpServer({ silent: options.silent ?? false })
    const notifier = yield* instance(smtp.url)
    const o = yield* owner({ ssl: options.ssl })
    return { smtp, notifier, o }
  })

/** Runs on a TestClock set to START, so that 10 minutes can pass at once. */
const atTestTime = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  TestClock.setTime(START).pipe(Effect.zipRight(self), Effect.provide(TestContext.TestContext))

const database = coreLayer(makeTestDatabase()).pipe(
  Layer.provideMerge(
    AppConfig.layerFromMap({ DATA_DIR: mkdtempSync(join(tmpdir(), "links-test-")), TOKEN_SECRET: "test token secret" })
  ),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

describe("click e-mails (notify_on_click)", () => {
  layer(database, { excludeTestServices: true })((it) => {
    it.scoped("one e-mail for the first clicks, none within 10 minutes, then one with the clicks since", () =>
      atTestTime(
        Effect.gen(function* () {
          const { smtp, notifier, o } = yield* mailing({ ssl: true })
          const id = yield* newLink(o, "watched", true)
          const short = `https://${o.domain}/watched`

          yield* notifier.record([{ linkId: id, clicks: 2 }, { linkId: id, clicks: 1 }])
          expect(yield* notifier.sendDue).toBe(1)
          expect(mailsTo(smtp, o.email)).toEqual([{ from: FROM, to: [o.email], subject: `${short}: 3 new clicks`, text: expect.any(String) }])
          const text = mailsTo(smtp, o.email)[0]!.text
          expect(text).toContain(`${short} has 3 new clicks`)
          expect(text).toContain(longUrl("watched"))
          expect(yield* notificationRow(id)).toEqual({ pending: 0, last_sent: seconds(START) })

          yield* notifier.record([{ linkId: id, clicks: 4 }])
          yield* TestClock.adjust("599 seconds")
          expect(yield* notifier.sendDue).toBe(0)
          expect(mailsTo(smtp, o.email)).toHaveLength(1)

          yield* notifier.record([{ linkId: id, clicks: 1 }])
          yield* TestClock.adjust("1 second")
          expect(yield* notifier.sendDue).toBe(1)
          expect(mailsTo(smtp, o.email).map((mail) => mail.subject)).toEqual([`${short}: 3 new clicks`, `${short}: 5 new clicks`])
          expect(yield* notificationRow(id)).toEqual({ pending: 0, last_sent: seconds(START) + 600 })

          yield* TestClock.adjust("1 hour")
          expect(yield* notifier.sendDue).toBe(0)
          expect(mailsTo(smtp, o.email)).toHaveLength(2)
        })
      )
    )

    it.scoped("links without notify_on_click get nothing; a deleted link's pending clicks are dropped", () =>
      atTestTime(
        Effect.gen(function* () {
          const { smtp, notifier, o } = yield* mailing({ ssl: false })
          const quiet = yield* newLink(o, "quiet", false)
          const doomed = yield* newLink(o, "doomed", true)

          yield* notifier.record([])
          yield* notifier.record([{ linkId: quiet, clicks: 5 }, { linkId: doomed, clicks: 2 }])
          expect(yield* notificationRow(quiet)).toBeUndefined()
          expect(yield* notificationRow(doomed)).toEqual({ pending: 2, last_sent: null })

          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE links SET status = 'deleted' WHERE id = ${doomed}`
          expect(yield* notifier.sendDue).toBe(0)
          expect(yield* notificationRow(doomed)).toMatchObject({ pending: 0 })
          yield* notifier.record([{ linkId: doomed, clicks: 1 }])
          expect(yield* notificationRow(doomed)).toMatchObject({ pending: 0 })

          yield* TestClock.adjust("1 hour")
          expect(yield* notifier.sendDue).toBe(0)
          expect(mailsTo(smtp, o.email)).toEqual([])
        })
      )
    )

    it.scoped("two instances sending at once send one e-mail per link, and every click is reported once", () =>
      atTestTime(
        Effect.gen(function* () {
          yield* nothingPending
          const smtp = yield* smtpServer()
          const a = yield* instance(smtp.url)
          const b = yield* instance(smtp.url)
          const o = yield* owner({ ssl: false })
          const ids: Array<number> = []
          for (let n = 0; n < 4; n++) ids.push(yield* newLink(o, `busy${n}`, true))
          const oneEach = ids.map((linkId) => ({ linkId, clicks: 1 }))

          yield* a.record(oneEach)
          const [sentByA, sentByB] = yield* Effect.all([a.sendDue, b.sendDue], { concurrency: 2 })
          expect(sentByA + sentByB).toBe(4)
          expect(mailsTo(smtp, o.email).map((mail) => mail.subject).sort()).toEqual(
            ids.map((_, n) => `http://${o.domain}/busy${n}: 1 new click`).sort()
          )

          // Batches land on both instances while both send: nothing is due again before 10 minutes.
          yield* TestClock.adjust("10 minutes")
          yield* Effect.all(
            [
              ...Array.from({ length: 5 }, () => a.record(oneEach)),
              ...Array.from({ length: 5 }, () => b.record(oneEach)),
              ...Array.from({ length: 3 }, () => a.sendDue),
              ...Array.from({ length: 3 }, () => b.sendDue)
            ],
            { concurrency: "unbounded" }
          )
          yield* TestClock.adjust("10 minutes")
          yield* Effect.all([a.sendDue, b.sendDue, a.sendDue, b.sendDue], { concurrency: "unbounded" })

          const mails = mailsTo(smtp, o.email)
          for (const [n, id] of ids.entries()) {
            const ofLink = mails.filter((mail) => mail.subject.startsWith(`http://${o.domain}/busy${n}:`))
            expect(ofLink.length).toBeLessThanOrEqual(3)
            expect(ofLink.reduce((sum, mail) => sum + countOf(mail), 0)).toBe(11)
            expect(yield* notificationRow(id)).toMatchObject({ pending: 0 })
          }
        })
      )
    )

    it.scoped("while the SMTP server is down no click is lost: the count goes out once it is back", () =>
      atTestTime(
        Effect.gen(function* () {
          const { smtp, notifier, o } = yield* mailing({ ssl: false })
          const sent = yield* newLink(o, "sent", true)
          const fresh = yield* newLink(o, "fresh", true)

          yield* notifier.record([{ linkId: sent, clicks: 2 }])
          expect(yield* notifier.sendDue).toBe(1)

          yield* TestClock.adjust("10 minutes")
          yield* notifier.record([{ linkId: sent, clicks: 3 }, { linkId: fresh, clicks: 1 }])
          yield* smtp.stop
          expect(yield* notifier.sendDue.pipe(Logger.withMinimumLogLevel(LogLevel.Error))).toBe(0)
          // Back as before the attempt, so the retry need not wait another 10 minutes.
          expect(yield* notificationRow(sent)).toEqual({ pending: 3, last_sent: seconds(START) })
          expect(yield* notificationRow(fresh)).toEqual({ pending: 1, last_sent: null })

          yield* notifier.record([{ linkId: sent, clicks: 1 }])
          yield* smtp.start
          // The Mailer tries the server again 5 s after it failed; until then sends fail at once.
          expect(yield* notifier.sendDue.pipe(Logger.withMinimumLogLevel(LogLevel.Error))).toBe(0)
          yield* TestClock.adjust("5 seconds")
          expect(yield* notifier.sendDue).toBe(2)
          expect(mailsTo(smtp, o.email).map((mail) => mail.subject).sort()).toEqual([
            `http://${o.domain}/fresh: 1 new click`,
            `http://${o.domain}/sent: 2 new clicks`,
            `http://${o.domain}/sent: 4 new clicks`
          ])
          expect(yield* notificationRow(sent)).toEqual({ pending: 0, last_sent: seconds(START) + 605 })
          expect(yield* notifier.sendDue).toBe(0)
        })
      )
    )

    it.scoped("an SMTP server that never answers: interrupted or timed out after 10 s, the count stays pending", () =>
      atTestTime(
        Effect.gen(function* () {
          const { smtp, notifier, o } = yield* mailing({ ssl: false, silent: true })
          const id = yield* newLink(o, "stuck", true)
          yield* notifier.record([{ linkId: id, clicks: 2 }])

          const interrupted = yield* Effect.fork(notifier.sendDue.pipe(Logger.withMinimumLogLevel(LogLevel.Error)))
          yield* until(() => smtp.held() === 1)
          yield* Fiber.interrupt(interrupted)
          expect(yield* notificationRow(id)).toEqual({ pending: 2, last_sent: null })

          const timedOut = yield* Effect.fork(notifier.sendDue.pipe(Logger.withMinimumLogLevel(LogLevel.Error)))
          yield* until(() => smtp.held() === 2)
          yield* TestClock.adjust("10 seconds")
          expect(yield* Fiber.join(timedOut)).toBe(0)
          expect(yield* notificationRow(id)).toEqual({ pending: 2, last_sent: null })
          expect(smtp.received).toEqual([])
        })
      )
    )

    it.scoped("without SMTP_URL the e-mail is written to the log", () =>
      Effect.gen(function* () {
        yield* nothingPending
        const logged: Array<Record<string, unknown>> = []
        const capture = Logger.make(({ annotations }) => {
          logged.push(Object.fromEntries(HashMap.toEntries(annotations)))
        })
        const notifier = yield* instance()
        const o = yield* owner({ ssl: false })
        const id = yield* newLink(o, "logged", true)

        yield* notifier.record([{ linkId: id, clicks: 2 }])
        const sent = yield* notifier.sendDue.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)), Logger.withMinimumLogLevel(LogLevel.Info))
        expect(sent).toBe(1)
        const mail = logged.find((annotations) => annotations["to"] === o.email)
        expect(mail).toMatchObject({ subject: `http://${o.domain}/logged: 2 new clicks` })
        expect(mail?.["text"]).toContain(longUrl("logged"))
      })
    )
  })
})
