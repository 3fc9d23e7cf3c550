import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { lookup } from "node:dns/promises"
import { hostname } from "node:os"
import { isPublicAddress } from "../src/Links/AddressPolicy.ts"
import { newLink } from "./support/Fixtures.ts"
import { at, call, codes, newUser, numberAt, within } from "./support/Http.ts"
import { receiver } from "./support/Receiver.ts"
import { newShortDomain } from "./support/Redirects.ts"
import { TestServer } from "./support/TestServer.ts"

const FAST = {
  URL_CHECK_ALLOW_PRIVATE: "false",
  WEBHOOK_POLL_MILLIS: "100",
  WEBHOOK_RETRY_SECONDS: "1",
  WEBHOOK_TIMEOUT_SECONDS: "1"
}

/**
 * This machine's name and its addresses, which the hosts file (or nss) makes loopback or private:
 * a name of an inside network, resolved without any DNS server.
 */
const insideName = Effect.promise(async () => {
  const name = hostname()
  const addresses = (await lookup(name, { all: true })).map((entry) => entry.address)
  expect(addresses.length, `${name} resolves`).toBeGreaterThan(0)
  expect(addresses.filter(isPublicAddress), `${name} resolves to private addresses only`).toEqual([])
  return { name, addresses }
})

const setup = Effect.gen(function* () {
  const user = yield* newUser()
  const domain = yield* newShortDomain(user)
  return { user, path: `/api/v4/${domain.id}/webhooks`, domainId: domain.id }
})

describe("webhook addresses", () => {
  layer(TestServer(FAST), { excludeTestServices: true })((it) => {
    it.effect("registration answers a name that resolves to a private address as one that does not resolve; a private literal or localhost is 10803", () =>
      Effect.gen(function* () {
        const { user, path } = yield* setup
        const inside = yield* insideName
        const nowhere = `nothing-${randomBytes(6).toString("hex")}.invalid`
        const replies = []
        for (const host of [inside.name, nowhere]) {
          const reply = yield* call("POST", path, { token: user.token, body: { url: `http://${host}:9/hook`, events: ["link.created"] } })
          expect([reply.status, codes(reply)], host).toEqual([200, []])
          expect(at(reply.body, "objects", 0, "url")).toBe(`http://${host}:9/hook`)
          replies.push(reply)
        }
        const [first, second] = replies.map((reply) => Object.keys(at(reply.body, "objects", 0) as object).sort())
        expect(first).toEqual(second)
        // Changing the URL to either name is answered alike too.
        const id = numberAt(replies[1]!.body, "objects", 0, "id")
        for (const host of [inside.name, nowhere]) {
          const patched = yield* call("PATCH", `${path}/${id}`, { token: user.token, body: { url: `https://${host}/hook` } })
          expect([patched.status, codes(patched)], host).toEqual([200, []])
        }
        for (const url of ["http://127.0.0.1:8080/hook", "http://10.1.2.3/", "http://[::1]/", "http://169.254.169.254/latest", "http://localhost/hook", "http://0x7f000001/"]) {
          const reply = yield* call("POST", path, { token: user.token, body: { url, events: ["link.created"] } })
          expect([reply.status, codes(reply)], url).toEqual([400, [10803]])
        }
      })
    )

    it.scoped("a delivery to a name that resolves to a private address is refused, and its log says so without the address", () =>
      Effect.gen(function* () {
        const { user, path, domainId } = yield* setup
        const inside = yield* insideName
        const hook = yield* receiver()
        const port = new URL(hook.url).port
        const created = yield* call("POST", path, { token: user.token, body: { url: `http://${inside.name}:${port}/hook`, events: ["link.created"] } })
        expect(created.status, created.text).toBe(200)
        const id = numberAt(created.body, "objects", 0, "id")
        yield* newLink(user, domainId)
        const log = call("GET", `${path}/${id}/deliveries`, { token: user.token })
        const attempted = yield* within(8000, Effect.map(log, (reply) => at(reply.body, "objects", 0, "attempts", 0) !== undefined))
        expect(attempted).toBeLessThan(8000)
        const reply = yield* log
        expect(at(reply.body, "objects", 0, "attempts", 0)).toMatchObject({ error: "address not allowed (private, loopback or reserved)" })
        expect(at(reply.body, "objects", 0, "attempts", 0)).not.toHaveProperty("status")
        const deliveries = JSON.stringify(at(reply.body, "objects"))
        for (const address of inside.addresses) expect(deliveries).not.toContain(address)
        expect(hook.received).toEqual([])
      })
    )
  })
})
