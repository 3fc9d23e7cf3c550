import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ClickLog } from "../src/Clicks/ClickLog.ts"
import { DomainRepo } from "../src/Domains/DomainRepo.ts"
import { Scheduler } from "../src/Links/Scheduler.ts"
import { Dispatcher } from "../src/Webhooks/Dispatcher.ts"
import { clickRow, writeClickRows } from "./support/Clicks.ts"
import { newLink } from "./support/Fixtures.ts"
import { at, call, codes, newUser, numberAt, stringAt, type TestUser, within } from "./support/Http.ts"
import { type Answer, receiver, type Received, signedBy } from "./support/Receiver.ts"
import { newShortDomain, visit } from "./support/Redirects.ts"
import { TestServer } from "./support/TestServer.ts"

const FAST = {
  URL_CHECK_ALLOW_PRIVATE: "true",
  WEBHOOK_POLL_MILLIS: "100",
  WEBHOOK_CLICK_INTERVAL_SECONDS: "1",
  WEBHOOK_RETRY_SECONDS: "1",
  WEBHOOK_TIMEOUT_SECONDS: "1"
}

const ALL_EVENTS = ["link.created", "link.updated", "link.archived", "link.deleted", "link.clicked"]

const newWebhook = (user: TestUser, domainId: number, url: string, events: ReadonlyArray<string> = ALL_EVENTS) =>
  Effect.map(call("POST", `/api/v4/${domainId}/webhooks`, { token: user.token, body: { url, events } }), (reply) => {
    if (reply.status !== 200) throw new Error(`webhook create failed: ${reply.text}`)
    return { id: numberAt(reply.body, "objects", 0, "id"), secret: stringAt(reply.body, "secret") }
  })

const setup = Effect.gen(function* () {
  const user = yield* newUser()
  const domain = yield* newShortDomain(user)
  return { user, domainId: domain.id, domainName: domain.name }
})

const eventsOf = (received: ReadonlyArray<Received>) => received.map((request) => request.headers["webhook-event"])
const bodyOf = (request: Received | undefined) => (request === undefined ? undefined : JSON.parse(request.body))
const arrived = (received: ReadonlyArray<Received>, count: number, ms = 8000) =>
  Effect.map(
    within(ms, Effect.sync(() => received.length >= count)),
    (took) => expect(took, `${count} requests (got ${received.length}: ${eventsOf(received).join(", ")})`).toBeLessThan(ms)
  )

const deliveriesOf = (user: TestUser, domainId: number, webhookId: number) =>
  Effect.map(call("GET", `/api/v4/${domainId}/webhooks/${webhookId}/deliveries`, { token: user.token }), (reply) => {
    if (reply.status !== 200) throw new Error(`deliveries failed: ${reply.text}`)
    return at(reply.body, "objects") as ReadonlyArray<Record<string, unknown>>
  })

/** A link's schedule moved into the past, as if its time had come, and the scheduler's sweep. */
const comeDue = (linkId: number, column: "archive_on" | "delete_on") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Both dates at once are refused (10116): the other one is cleared.
    const other = column === "archive_on" ? "delete_on" : "archive_on"
    yield* sql`UPDATE links SET ${sql.unsafe(column)} = now() - interval '1 second', ${sql.unsafe(other)} = NULL WHERE id = ${linkId}`
    yield* (yield* Scheduler).sweep
  }).pipe(Effect.orDie)

describe("webhooks", () => {
  layer(TestServer(FAST), { excludeTestServices: true })((it) => {
    it.scoped("link events arrive signed, with the link as version 4 answers it; the secret is shown once", () =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        const hook = yield* receiver()
        const deletions = yield* receiver()
        const { id, secret } = yield* newWebhook(user, domainId, hook.url, ["link.created", "link.updated", "link.archived", "link.deleted"])
        yield* newWebhook(user, domainId, deletions.url, ["link.deleted"])
        expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
        for (const path of [`/api/v4/${domainId}/webhooks`, `/api/v4/${domainId}/webhooks/${id}`]) {
          const reply = yield* call("GET", path, { token: user.token })
          expect(reply.status).toBe(200)
          expect(reply.text).not.toContain(secret)
          expect(at(reply.body, "objects", 0, "events")).toEqual(["link.created", "link.updated", "link.archived", "link.deleted"])
        }

        const linkId = yield* newLink(user, domainId, { alias: "hooked", tags: [{ name: "promo", shared: true }] })
        yield* arrived(hook.received, 1)
        const created = hook.received[0]!
        expect(created.headers["webhook-event"]).toBe("link.created")
        expect(created.headers["content-type"]).toBe("application/json")
        expect(signedBy(secret, created.headers["webhook-signature"], created.body)).toBe(true)
        expect(signedBy("whsec_other", created.headers["webhook-signature"], created.body)).toBe(false)
        const answered = yield* call("GET", `/api/v4/${domainId}/links/${linkId}`, { token: user.token })
        expect(bodyOf(created)).toEqual({
          event: "link.created",
          occurred_at: expect.any(Number),
          domain_id: domainId,
          link: at(answered.body, "objects", 0)
        })

        const patched = yield* call("PATCH", `/api/v4/${domainId}/links/${linkId}`, {
          token: user.token,
          body: [{ op: "replace", path: "/notes", value: "changed" }]
        })
        expect(patched.status).toBe(200)
        yield* arrived(hook.received, 2)
        expect(at(bodyOf(hook.received[1]), "link", "notes")).toBe("changed")
        // Deliveries go out concurrently: events made together may arrive in any order (occurred_at tells).
        yield* comeDue(linkId, "archive_on")
        yield* arrived(hook.received, 4)
        expect(eventsOf(hook.received).slice(2).sort()).toEqual(["link.archived", "link.updated"])
        const archived = hook.received.find((request) => request.headers["webhook-event"] === "link.archived")
        expect(at(bodyOf(archived), "link", "status")).toBe("archived")
        yield* comeDue(linkId, "delete_on")
        yield* arrived(hook.received, 6)
        expect(eventsOf(hook.received).slice(4).sort()).toEqual(["link.deleted", "link.updated"])
        yield* arrived(deletions.received, 1)
        expect(eventsOf(deletions.received)).toEqual(["link.deleted"])
        // Every delivery has its own id, the same on each attempt; clicks were not asked for.
        expect(new Set(hook.received.map((request) => request.headers["webhook-id"])).size).toBe(6)
        const allDelivered = Effect.map(deliveriesOf(user, domainId, id), (log) => log.length === 6 && log.every((delivery) => delivery["state"] === "delivered"))
        expect(yield* within(3000, allDelivered)).toBeLessThan(3000)
        const log = yield* deliveriesOf(user, domainId, id)
        expect(at(log[0], "attempts", 0, "status")).toBe(200)
      })
    )

    it.scoped("deleting a domain sends link.deleted for each of its links", () =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        const hook = yield* receiver()
        yield* newWebhook(user, domainId, hook.url, ["link.deleted"])
        yield* newLink(user, domainId, { alias: "one" })
        yield* newLink(user, domainId, { alias: "two" })
        expect((yield* call("DELETE", `/api/v4/domains/${domainId}`, { token: user.token })).status).toBe(200)
        yield* arrived(hook.received, 2)
        expect(hook.received.map((request) => at(bodyOf(request), "link", "alias")).sort()).toEqual(["one", "two"])
      })
    )

    it.scoped("link.clicked: many redirects arrive in a few batched requests, each click once, a replayed batch not again", () =>
      Effect.gen(function* () {
        const { user, domainId, domainName } = yield* setup
        const hook = yield* receiver()
        yield* newWebhook(user, domainId, hook.url, ["link.clicked"])
        const linkId = yield* newLink(user, domainId, { alias: "clicky" })
        for (let i = 0; i < 40; i++) expect((yield* visit(domainName, "/clicky")).status).toBe(301)
        yield* (yield* ClickLog).flush
        const clicks = (received: ReadonlyArray<Received>) =>
          received.flatMap((request) => at(bodyOf(request), "clicks") as ReadonlyArray<Record<string, unknown>>)
        expect(yield* within(8000, Effect.sync(() => clicks(hook.received).length >= 40))).toBeLessThan(8000)
        // A batch written again, as a spill file's replay does after an unanswered commit: stored once, sent once.
        const rows = [clickRow({ linkId, domainId, at: Math.floor(Date.now() / 1000) }), clickRow({ linkId, domainId, at: Math.floor(Date.now() / 1000) })]
        yield* writeClickRows(rows)
        yield* writeClickRows(rows)
        expect(yield* within(8000, Effect.sync(() => clicks(hook.received).length >= 42))).toBeLessThan(8000)
        yield* Effect.sleep("2500 millis")
        const all = clicks(hook.received)
        expect(all.length).toBe(42)
        expect(new Set(all.map((click) => click["id"])).size).toBe(42)
        expect(all.every((click) => click["link_id"] === linkId && typeof click["at"] === "number")).toBe(true)
        expect(hook.received.length).toBeLessThanOrEqual(4)
        expect(eventsOf(hook.received).every((event) => event === "link.clicked")).toBe(true)
      })
    )

    const failingFirst = (first: Answer) =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        const hook = yield* receiver((index) => (index === 0 ? first : { status: 200 }))
        const { id } = yield* newWebhook(user, domainId, hook.url, ["link.created"])
        yield* newLink(user, domainId)
        yield* arrived(hook.received, 2)
        expect(hook.received[1]!.headers["webhook-id"]).toBe(hook.received[0]!.headers["webhook-id"])
        expect(hook.received[1]!.body).toBe(hook.received[0]!.body)
        const attemptsOf = (delivery: unknown) => at(delivery, "attempts") as ReadonlyArray<Record<string, unknown>>
        const logged = yield* within(3000, Effect.map(deliveriesOf(user, domainId, id), ([delivery]) => attemptsOf(delivery).length === 2))
        expect(logged).toBeLessThan(3000)
        const [delivery] = yield* deliveriesOf(user, domainId, id)
        const attempts = attemptsOf(delivery)
        return { delivery, attempts }
      })

    it.scoped("a receiver answering 500 gets the same delivery again after the backoff, logged", () =>
      Effect.gen(function* () {
        const { delivery, attempts } = yield* failingFirst({ status: 500 })
        expect(at(delivery, "state")).toBe("delivered")
        expect(delivery).not.toHaveProperty("next_attempt")
        expect(attempts[0]).toMatchObject({ number: 1, status: 500, error: "HTTP 500" })
        expect(numberAt(attempts[0], "next_attempt") - numberAt(attempts[0], "at")).toBeGreaterThanOrEqual(1)
        // The last attempt: no error, no next try, both left out of the answer.
        expect(attempts[1]).toEqual({ number: 2, at: expect.any(Number), status: 200, duration_ms: expect.any(Number) })
      })
    )

    it.scoped("a receiver that does not answer in time is retried", () =>
      Effect.gen(function* () {
        const { attempts } = yield* failingFirst("hang")
        expect(attempts[0]).toMatchObject({ error: "no answer within 1 s" })
        expect(attempts[0]).not.toHaveProperty("status")
        expect(numberAt(attempts[0], "duration_ms")).toBeGreaterThanOrEqual(900)
      })
    )

    it.scoped("a redirect, here to a private address, is not followed: the attempt fails and is logged", () =>
      Effect.gen(function* () {
        const { attempts } = yield* failingFirst({ status: 302, headers: { location: "http://10.0.0.1/steal" } })
        expect(attempts[0]).toMatchObject({ status: 302, error: "HTTP 302: redirects are not followed" })
      })
    )

    it.scoped("rotation: a new secret shown once; for a day deliveries carry signatures by both", () =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        const hook = yield* receiver()
        const { id, secret } = yield* newWebhook(user, domainId, hook.url, ["link.created"])
        const rotated = yield* call("POST", `/api/v4/${domainId}/webhooks/${id}/rotate-secret`, { token: user.token })
        expect(rotated.status).toBe(200)
        const fresh = stringAt(rotated.body, "secret")
        expect(fresh).not.toBe(secret)
        expect(numberAt(rotated.body, "objects", 0, "previous_secret_until") - Date.now() / 1000).toBeGreaterThan(86_000)
        yield* newLink(user, domainId)
        yield* arrived(hook.received, 1)
        const [request] = hook.received
        expect(signedBy(fresh, request!.headers["webhook-signature"], request!.body)).toBe(true)
        expect(signedBy(secret, request!.headers["webhook-signature"], request!.body)).toBe(true)
        expect(String(request!.headers["webhook-signature"]).match(/v1=/g)?.length).toBe(2)
        const shown = yield* call("GET", `/api/v4/${domainId}/webhooks/${id}`, { token: user.token })
        expect(shown.text).not.toContain(fresh)
      })
    )

    it.scoped("replay sends a delivered delivery again, as a new attempt with the same id", () =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        const hook = yield* receiver()
        const { id } = yield* newWebhook(user, domainId, hook.url, ["link.created"])
        yield* newLink(user, domainId)
        yield* arrived(hook.received, 1)
        const [delivery] = yield* deliveriesOf(user, domainId, id)
        const replayed = yield* call("POST", `/api/v4/${domainId}/webhooks/${id}/deliveries/${numberAt(delivery, "id")}/replay`, { token: user.token })
        expect(replayed.status).toBe(200)
        yield* arrived(hook.received, 2)
        expect(hook.received[1]!.headers["webhook-id"]).toBe(String(numberAt(delivery, "id")))
        expect(hook.received[1]!.body).toBe(hook.received[0]!.body)
        const logged = yield* within(
          3000,
          Effect.map(deliveriesOf(user, domainId, id), ([after]) => (at(after, "attempts") as ReadonlyArray<unknown>).length === 2)
        )
        expect(logged).toBeLessThan(3000)
        const missing = yield* call("POST", `/api/v4/${domainId}/webhooks/${id}/deliveries/999999/replay`, { token: user.token })
        expect([missing.status, codes(missing)]).toEqual([404, [10806]])
        // Settled deliveries leave the log after 30 days; pending ones stay.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE webhook_deliveries SET created = now() - interval '31 days' WHERE webhook_id = ${id}`.pipe(Effect.orDie)
        yield* sql`
          INSERT INTO webhook_deliveries (webhook_id, event, body, created, next_attempt, retry_until)
          VALUES (${id}, 'link.created', '{}', now() - interval '31 days', now() + interval '1 hour', now() + interval '2 hours')`.pipe(Effect.orDie)
        yield* (yield* Dispatcher).prune.pipe(Effect.orDie)
        expect((yield* deliveriesOf(user, domainId, id)).map((delivery) => delivery["state"])).toEqual(["pending"])
      })
    )

    it.scoped("three dispatchers on one database send each event once; a dead instance's lease runs out and its delivery goes out", () =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        const hook = yield* receiver()
        const { id } = yield* newWebhook(user, domainId, hook.url, ["link.created"])
        yield* Layer.build(Dispatcher.Default)
        yield* Layer.build(Dispatcher.Default)
        for (let i = 0; i < 30; i++) yield* newLink(user, domainId)
        const sql = yield* SqlClient.SqlClient
        // As left by an instance that took it and was killed: leased for another second, never attempted.
        yield* sql`
          INSERT INTO webhook_deliveries (webhook_id, event, body, next_attempt, retry_until, leased_until)
          VALUES (${id}, 'link.created', '{"orphan":true}', now(), now() + interval '1 hour', now() + interval '1 second')`.pipe(Effect.orDie)
        yield* arrived(hook.received, 31)
        yield* Effect.sleep("1500 millis")
        expect(hook.received.length).toBe(31)
        expect(new Set(hook.received.map((request) => request.headers["webhook-id"])).size).toBe(31)
        expect(hook.received.filter((request) => request.body === '{"orphan":true}').length).toBe(1)
      })
    )

    it.effect("who may: account admins and admins of the domain; other members 403, other accounts 404", () =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        const member = yield* newUser({ accountId: user.accountId, role: "member" })
        const stranger = yield* newUser()
        const path = `/api/v4/${domainId}/webhooks`
        const body = { url: "http://127.0.0.1:9/hook", events: ["link.created"] }
        const refused = yield* call("POST", path, { token: member.token, body })
        expect([refused.status, codes(refused)]).toEqual([403, [10800]])
        const listed = yield* call("GET", path, { token: member.token })
        expect([listed.status, codes(listed)]).toEqual([403, [10800]])
        const hidden = yield* call("GET", path, { token: stranger.token })
        expect([hidden.status, codes(hidden)]).toEqual([404, [10101]])
        expect((yield* call("GET", path)).status).toBe(401)
        yield* (yield* DomainRepo).addAdmin(member.userId, domainId).pipe(Effect.orDie)
        expect((yield* call("POST", path, { token: member.token, body })).status).toBe(200)
      })
    )

    it.effect("bad input: every field's code; update, delete and the limit per domain", () =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        const path = `/api/v4/${domainId}/webhooks`
        const post = (body: unknown) => Effect.map(call("POST", path, { token: user.token, body }), (reply) => [reply.status, codes(reply)])
        expect(yield* post({ events: ["link.created"] })).toEqual([400, [10802]])
        expect(yield* post({ url: "ftp://example.com/", events: ["link.created"] })).toEqual([400, [10802]])
        expect(yield* post({ url: 42, events: ["link.created"] })).toEqual([400, [10802]])
        expect(yield* post({ url: "http://127.0.0.1:9/" })).toEqual([400, [10804]])
        expect(yield* post({ url: "http://127.0.0.1:9/", events: [] })).toEqual([400, [10804]])
        expect(yield* post({ url: "http://127.0.0.1:9/", events: ["link.viewed"] })).toEqual([400, [10804]])
        expect(yield* post({ url: "http://127.0.0.1:9/", events: ["link.created"], active: "yes" })).toEqual([400, [10805]])
        expect(yield* post({ url: 1, events: "all", active: 0 })).toEqual([400, [10802, 10804, 10805]])
        const { id } = yield* newWebhook(user, domainId, "http://127.0.0.1:9/hook", ["link.created", "link.created"])
        const one = `${path}/${id}`
        const shown = yield* call("GET", one, { token: user.token })
        expect(at(shown.body, "objects", 0, "events")).toEqual(["link.created"])
        const patch = (body: unknown) => Effect.map(call("PATCH", one, { token: user.token, body }), (reply) => [reply.status, codes(reply)])
        expect(yield* patch({})).toEqual([400, [10809]])
        expect(yield* patch({ url: "not a url" })).toEqual([400, [10802]])
        expect(yield* patch({ events: ["nope"] })).toEqual([400, [10804]])
        const updated = yield* call("PATCH", one, { token: user.token, body: { active: false, events: ["link.deleted"] } })
        expect(at(updated.body, "objects", 0)).toMatchObject({ active: false, events: ["link.deleted"] })
        for (const bad of [`${path}/abc`, `${path}/0`, `${path}/999999`]) {
          const reply = yield* call("GET", bad, { token: user.token })
          expect([reply.status, codes(reply)], bad).toEqual([404, [10801]])
        }
        const page = yield* call("GET", `${one}/deliveries?page=0`, { token: user.token })
        expect([page.status, codes(page)]).toEqual([400, [10807]])
        const otherDomain = (yield* setup).domainId
        const elsewhere = yield* call("GET", `/api/v4/${otherDomain}/webhooks/${id}`, { token: user.token })
        expect([elsewhere.status, codes(elsewhere)]).toEqual([404, [10101]])
        // The first one was made inactive above: ten active ones more.
        for (let i = 1; i <= 10; i++) yield* newWebhook(user, domainId, `http://127.0.0.1:9/hook${i}`)
        expect(yield* post({ url: "http://127.0.0.1:9/", events: ["link.created"] })).toEqual([400, [10808]])
        // An inactive one still fits; it cannot be made active while ten are.
        const idle = yield* call("POST", path, { token: user.token, body: { url: "http://127.0.0.1:9/", events: ["link.created"], active: false } })
        expect(idle.status).toBe(200)
        const activated = yield* call("PATCH", `${path}/${numberAt(idle.body, "objects", 0, "id")}`, { token: user.token, body: { active: true } })
        expect([activated.status, codes(activated)]).toEqual([400, [10808]])
        expect((yield* call("DELETE", one, { token: user.token })).status).toBe(200)
        const gone = yield* call("DELETE", one, { token: user.token })
        expect([gone.status, codes(gone)]).toEqual([404, [10801]])
      })
    )
  })

  layer(TestServer({ ...FAST, URL_CHECK_ALLOW_PRIVATE: "false" }), { excludeTestServices: true })((it) => {
    it.scoped("private addresses: refused at registration, and at delivery when the URL was stored another way", () =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        for (const url of ["http://127.0.0.1:8080/hook", "http://localhost/hook", "http://10.1.2.3/", "http://[::1]/", "http://169.254.169.254/latest"]) {
          const reply = yield* call("POST", `/api/v4/${domainId}/webhooks`, { token: user.token, body: { url, events: ["link.created"] } })
          expect([reply.status, codes(reply)], url).toEqual([400, [10803]])
        }
        const hook = yield* receiver()
        // Registered with a public address; its name then points somewhere private (as DNS can change): each connection is checked again.
        const { id } = yield* newWebhook(user, domainId, "http://192.0.43.10:9/hook", ["link.created"])
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE webhooks SET url = ${hook.url} WHERE id = ${id}`.pipe(Effect.orDie)
        yield* newLink(user, domainId)
        const attempted = yield* within(
          5000,
          Effect.map(deliveriesOf(user, domainId, id), ([delivery]) => ((at(delivery, "attempts") as ReadonlyArray<unknown> | undefined)?.length ?? 0) >= 1)
        )
        expect(attempted).toBeLessThan(5000)
        const [delivery] = yield* deliveriesOf(user, domainId, id)
        expect(at(delivery, "attempts", 0)).toMatchObject({ error: "address not allowed (private, loopback or reserved)" })
        expect(at(delivery, "attempts", 0)).not.toHaveProperty("status")
        expect(at(delivery, "state")).toBe("pending")
        expect(hook.received).toEqual([])
      })
    )
  })
})
