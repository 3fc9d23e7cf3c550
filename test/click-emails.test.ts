import { SqlClient } from "@effect/sql"
import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ClickLog } from "../src/Clicks/ClickLog.ts"
import { ClickNotifier } from "../src/Clicks/ClickNotifier.ts"
import { newLink } from "./support/Fixtures.ts"
import { newUser } from "./support/Http.ts"
import { newShortDomain, visit } from "./support/Redirects.ts"
import { startSmtp } from "./support/Smtp.ts"
import { TestServer } from "./support/TestServer.ts"

const smtp = await startSmtp()
afterAll(() => smtp.close())

const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

/** Writes the queued clicks and sends what is due; the messages that reached the SMTP server for `to`. */
const deliver = (to: string) =>
  Effect.gen(function* () {
    yield* (yield* ClickLog).flush
    yield* (yield* ClickNotifier).sendDue
    return smtp.received.filter((mail) => mail.to.includes(to))
  })

/** Moves the link's last e-mail `minutes` into the past (instead of waiting for them). */
const age = (linkId: number, minutes: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE click_notifications SET last_sent = last_sent - make_interval(mins => ${minutes}) WHERE link_id = ${linkId}`
  )

describe("click e-mails (notify_on_click)", () => {
  layer(TestServer({ SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM: "links@sho.rt" }), {
    excludeTestServices: true
  })((it) => {
    it.effect("one e-mail for the first clicks, none within 10 minutes, then one with the clicks since; bots never count", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const id = yield* newLink(user, domain.id, { alias: "watched", notify_on_click: 1 })
        for (let n = 0; n < 3; n++) yield* visit(domain.name, "/watched")
        yield* visit(domain.name, "/watched", { headers: { "user-agent": GOOGLEBOT } })
        const first = yield* deliver(user.email)
        expect(first).toHaveLength(1)
        expect(first[0]?.raw).toContain(`Subject: http://${domain.name}/watched: 3 new clicks`)
        expect(first[0]?.raw).toMatch(/From: .*links@sho\.rt/)

        for (let n = 0; n < 2; n++) yield* visit(domain.name, "/watched")
        yield* age(id, 9)
        expect(yield* deliver(user.email)).toHaveLength(1)
        yield* age(id, 2)
        const second = yield* deliver(user.email)
        expect(second).toHaveLength(2)
        expect(second[1]?.raw).toContain("2 new clicks")
        expect(yield* deliver(user.email)).toHaveLength(2)
      })
    )

    it.effect("links without notify_on_click send nothing; two instances sending at once send one e-mail", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        yield* newLink(user, domain.id, { alias: "quiet" })
        yield* newLink(user, domain.id, { alias: "loud", notify_on_click: 1 })
        yield* visit(domain.name, "/quiet")
        yield* visit(domain.name, "/loud")
        yield* (yield* ClickLog).flush
        const notifier = yield* ClickNotifier
        yield* Effect.all([notifier.sendDue, notifier.sendDue, notifier.sendDue], { concurrency: 3 })
        const mails = smtp.received.filter((mail) => mail.to.includes(user.email))
        expect(mails).toHaveLength(1)
        expect(mails[0]?.raw).toContain("/loud: 1 new click")
      })
    )
  })

  layer(TestServer({ SMTP_URL: "smtp://127.0.0.1:1" }), { excludeTestServices: true })((it) => {
    it.effect("when the SMTP server cannot be reached the clicks stay pending for the next attempt", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const id = yield* newLink(user, domain.id, { alias: "unsent", notify_on_click: 1 })
        yield* visit(domain.name, "/unsent")
        yield* visit(domain.name, "/unsent")
        yield* (yield* ClickLog).flush
        expect(yield* (yield* ClickNotifier).sendDue).toBe(0)
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ pending: number; last_sent: unknown }>`
          SELECT pending, last_sent FROM click_notifications WHERE link_id = ${id}`
        expect(row).toEqual({ pending: 2, last_sent: null })
      })
    )
  })
})
