import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Scheduler } from "../src/Links/Scheduler.ts"
import { at, call, codes, newUser, numberAt, type TestUser } from "./support/Http.ts"
import { newDomain, newLink } from "./support/Fixtures.ts"
import { TestServer } from "./support/TestServer.ts"

const setup = Effect.gen(function* () {
  const user = yield* newUser()
  return { user, domainId: yield* newDomain(user) }
})

const createLink = (user: TestUser, domainId: number, body: Record<string, unknown>) =>
  newLink(user, domainId, { url: "https://example.com/", ...body })

/** Moves a link's schedule and its timestamps an hour back, as if that hour had passed. */
const anHourLater = (linkId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE links SET archive_on = archive_on - interval '1 hour', delete_on = delete_on - interval '1 hour',
          created = created - interval '1 hour', modified = modified - interval '1 hour'
        WHERE id = ${linkId}`
  )

describe("scheduled archive and delete", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("archive_on reached: the link becomes archived, stays readable, and modified changes", () =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        const id = yield* createLink(user, domainId, { alias: "arch", archive_on: Math.floor(Date.now() / 1000) + 60 })
        const scheduler = yield* Scheduler
        expect((yield* scheduler.sweep).filter((m) => m.id === id)).toEqual([])
        yield* anHourLater(id)
        // The service's own 15 s sweep may have come first; either way the link moved once, to archived.
        expect((yield* scheduler.sweep).filter((m) => m.id === id && m.status !== "archived")).toEqual([])
        const link = at((yield* call("GET", `/api/v4/${domainId}/links/${id}`, { token: user.token })).body, "objects", 0)
        expect(at(link, "status")).toBe("archived")
        expect(numberAt(link, "modified") - numberAt(link, "created")).toBeGreaterThanOrEqual(3599)
        const taken = yield* call("POST", `/api/v4/${domainId}/links`, {
          token: user.token,
          body: { url: "https://example.com/", alias: "arch", override_404_check: 1 }
        })
        expect(codes(taken)).toEqual([10104])
      })
    )

    it.effect("delete_on reached: the link vanishes from every read and frees its alias", () =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        const id = yield* createLink(user, domainId, { alias: "gone", delete_on: Math.floor(Date.now() / 1000) + 60 })
        yield* anHourLater(id)
        const scheduler = yield* Scheduler
        expect((yield* scheduler.sweep).filter((m) => m.id === id && m.status !== "deleted")).toEqual([])
        for (const path of [`/api/v4/${domainId}/links/${id}`, `/api/v4/${domainId}/links/exists?alias=gone`, `/api/v4/${domainId}/links/${id}/qr`]) {
          const reply = yield* call("GET", path, { token: user.token })
          expect(reply.status, path).toBe(404)
          expect(codes(reply), path).toEqual([10150])
        }
        const again = yield* createLink(user, domainId, { alias: "GONE" })
        expect(again).not.toBe(id)
      })
    )

    it.effect("an archived link given a delete_on (E12) is deleted when it comes", () =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        const id = yield* createLink(user, domainId, { alias: "later", archive_on: Math.floor(Date.now() / 1000) + 60 })
        yield* anHourLater(id)
        const scheduler = yield* Scheduler
        yield* scheduler.sweep
        const patched = yield* call("PATCH", `/api/v4/${domainId}/links/${id}`, {
          token: user.token,
          body: [{ op: "replace", path: "/archive_on", value: null }, { op: "replace", path: "/delete_on", value: Math.floor(Date.now() / 1000) + 60 }]
        })
        expect(patched.status, patched.text).toBe(200)
        expect(at(patched.body, "objects", 0, "status")).toBe("archived")
        yield* anHourLater(id)
        yield* scheduler.sweep
        expect(codes(yield* call("GET", `/api/v4/${domainId}/links/${id}`, { token: user.token }))).toEqual([10150])
        expect(yield* createLink(user, domainId, { alias: "later" })).not.toBe(id)
      })
    )

    it.effect("sweeps running at once move each due link exactly once", () =>
      Effect.gen(function* () {
        const { user, domainId } = yield* setup
        const soon = Math.floor(Date.now() / 1000) + 60
        const ids: Array<number> = []
        for (let i = 0; i < 10; i++) ids.push(yield* createLink(user, domainId, i % 2 === 0 ? { archive_on: soon } : { delete_on: soon }))
        for (const id of ids) yield* anHourLater(id)
        const scheduler = yield* Scheduler
        const results = yield* Effect.all([scheduler.sweep, scheduler.sweep, scheduler.sweep], { concurrency: 3 })
        const moved = results.flat().filter((m) => ids.includes(m.id)).map((m) => m.id)
        expect(new Set(moved).size).toBe(moved.length)
        const sql = yield* SqlClient.SqlClient
        const states = yield* sql<{ status: string; n: number }>`
          SELECT status, count(*)::int8 AS n FROM links WHERE id IN ${sql.in(ids)} GROUP BY status ORDER BY status`
        expect(states).toEqual([{ status: "archived", n: 5 }, { status: "deleted", n: 5 }])
      })
    )
  })
})
