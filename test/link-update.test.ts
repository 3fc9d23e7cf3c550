import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Accounts } from "../src/Accounts/Accounts.ts"
import { at, call, codes, newUser, numberAt, type Reply, type TestUser } from "./support/Http.ts"
import { answering, newDomain as domainOf, newLink as linkOf, newUtmTemplate } from "./support/Fixtures.ts"
import { TestServer } from "./support/TestServer.ts"

const patch = (user: TestUser, domainId: number | string, linkId: number | string, body: unknown) =>
  call("PATCH", `/api/v4/${domainId}/links/${linkId}`, { token: user.token, body })

const read = (user: TestUser, domainId: number, linkId: number) =>
  Effect.map(call("GET", `/api/v4/${domainId}/links/${linkId}`, { token: user.token }), (reply) => at(reply.body, "objects", 0))

const replace = (path: string, value: unknown) => ({ op: "replace", path, value })

const errors = (reply: Reply) => at(reply.body, "errors")

describe("links: E12 update", () => {
  layer(TestServer({ URL_CHECK_ALLOW_PRIVATE: "true" }), { excludeTestServices: true })((it) => {
    it.effect("replaces each path, answers the updated link, E11 reads it back, modified changes", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const id = yield* linkOf(user, domainId, { alias: "first" })
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE links SET created = created - interval '1 hour', modified = modified - interval '1 hour' WHERE id = ${id}`
        const future = Math.floor(Date.now() / 1000) + 7200
        const reply = yield* patch(user, domainId, id, [
          replace("/alias", "Second"),
          replace("/notes", "new notes"),
          replace("/notify_on_click", 1),
          replace("/url", "Example.org/next?a=1"),
          { path: "/delete_on", value: future }
        ])
        expect(reply.status, reply.text).toBe(200)
        const link = at(reply.body, "objects", 0)
        expect(link).toMatchObject({
          id,
          alias: "Second",
          notes: "new notes",
          notify_on_click: "1",
          url: "http://example.org/next?a=1",
          redirect_url: "http://example.org/next?a=1",
          delete_on: future,
          status: "active"
        })
        expect(link).not.toHaveProperty("archive_on")
        expect(String(at(link, "short_link"))).toMatch(/\/Second$/)
        expect(numberAt(link, "modified") - numberAt(link, "created")).toBeGreaterThanOrEqual(3599)
        expect(yield* read(user, domainId, id)).toEqual(link)
        expect(Object.keys(reply.body as object)).toEqual(["objects"])

        const archived = yield* patch(user, domainId, id, [
          replace("/delete_on", null),
          replace("/archive_on", String(future + 60)),
          replace("/notify_on_click", "0"),
          replace("/notes", null)
        ])
        expect(archived.status, archived.text).toBe(200)
        expect(at(archived.body, "objects", 0)).toMatchObject({ archive_on: future + 60, notify_on_click: "0", notes: "" })
        expect(at(archived.body, "objects", 0)).not.toHaveProperty("delete_on")
        const cleared = yield* patch(user, domainId, id, [replace("/archive_on", null)])
        expect(at(cleared.body, "objects", 0)).not.toHaveProperty("archive_on")
        expect(yield* read(user, domainId, id)).not.toHaveProperty("archive_on")
      })
    )

    it.effect("the alias: own alias in another case is fine; taken by another link (ignoring case) 10140 with the alias", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const id = yield* linkOf(user, domainId, { alias: "mine" })
        yield* linkOf(user, domainId, { alias: "Taken" })
        const recased = yield* patch(user, domainId, id, [replace("/alias", "MINE")])
        expect(recased.status, recased.text).toBe(200)
        expect(at(recased.body, "objects", 0, "alias")).toBe("MINE")
        const taken = yield* patch(user, domainId, id, [replace("/alias", "tAKEN")])
        expect(taken.status).toBe(400)
        expect(errors(taken)).toEqual([{ code: 10140, message: "tAKEN" }])
        const otherDomain = yield* domainOf(user)
        const elsewhere = yield* linkOf(user, otherDomain)
        expect((yield* patch(user, otherDomain, elsewhere, [replace("/alias", "taken")])).status).toBe(200)
        for (const alias of ["bad alias", "a".repeat(41), "api", "", 5, null]) {
          const reply = yield* patch(user, domainId, id, [replace("/alias", alias)])
          expect(errors(reply), String(alias)).toEqual([{ code: 10133, message: "/alias value invalid" }])
        }
      })
    )

    it.effect("op and path: only replace (the default), the six paths with their slash; 10130, 10131 naming the field, not the value", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const id = yield* linkOf(user, domainId)
        const add = yield* patch(user, domainId, id, [{ op: "add", path: "/notes", value: "x" }])
        expect(add.status).toBe(400)
        expect(errors(add)).toEqual([{ code: 10130, message: "Operation given in 0.op not supported" }])
        expect(errors(yield* patch(user, domainId, id, [replace("/notes", "x"), { op: 7, path: "/notes", value: "x" }]))).toEqual([
          { code: 10130, message: "Operation given in 1.op not supported" }
        ])
        expect(errors(yield* patch(user, domainId, id, ["replace"]))).toEqual([{ code: 10130, message: "Operation given in 0 not supported" }])
        for (const path of ["notes", "/status", "/NOTES", "/redirect_type"]) {
          expect(errors(yield* patch(user, domainId, id, [replace(path, "x")])), path).toEqual([
            { code: 10131, message: "Modifying path given in 0.path not supported" }
          ])
        }
        expect(errors(yield* patch(user, domainId, id, [{ value: "x" }]))).toEqual([
          { code: 10131, message: "Modifying path given in 0.path not supported" }
        ])
        const both = yield* patch(user, domainId, id, [{ op: "remove", path: "/tags" }])
        expect(codes(both)).toEqual([10130, 10131])
        expect(at(yield* read(user, domainId, id), "notes")).toBe("")
      })
    )

    it.effect("url, notes and notify_on_click values: 10132, 10134, 10135, 10153", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const id = yield* linkOf(user, domainId)
        for (const url of ["javascript:alert(1)", "", 5, null, "https://user:pw@x.example/", `https://x.example/${"a".repeat(4100)}`]) {
          expect(errors(yield* patch(user, domainId, id, [replace("/url", url)])), String(url).slice(0, 30)).toEqual([
            { code: 10132, message: "/url value invalid" }
          ])
        }
        expect(errors(yield* patch(user, domainId, id, [replace("/notes", 5)]))).toEqual([{ code: 10134, message: "/notes value invalid" }])
        expect(errors(yield* patch(user, domainId, id, [replace("/notes", "x".repeat(1001))]))).toEqual([
          { code: 10135, message: "/notes value too long" }
        ])
        expect((yield* patch(user, domainId, id, [replace("/notes", "x".repeat(1000))])).status).toBe(200)
        for (const value of [2, "yes", null, undefined]) {
          expect(codes(yield* patch(user, domainId, id, [replace("/notify_on_click", value)])), String(value)).toEqual([10153])
        }
      })
    )

    it.effect("dates: 10111-10114 for invalid and past values, 10116 when the link would end with both", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const now = Math.floor(Date.now() / 1000)
        const id = yield* linkOf(user, domainId, { archive_on: now + 3600 })
        expect(errors(yield* patch(user, domainId, id, [replace("/delete_on", "soon")]))).toEqual([
          { code: 10111, message: "delete_on is invalid" }
        ])
        expect(errors(yield* patch(user, domainId, id, [replace("/delete_on", now - 10)]))).toEqual([
          { code: 10112, message: "delete_on must be after current time" }
        ])
        expect(errors(yield* patch(user, domainId, id, [replace("/archive_on", "1d")]))).toEqual([
          { code: 10113, message: "archive_on is invalid" }
        ])
        expect(errors(yield* patch(user, domainId, id, [replace("/archive_on", String(now - 10))]))).toEqual([
          { code: 10114, message: "archive_on must be after current time" }
        ])
        // The stored archive_on and a new delete_on: both set.
        expect(errors(yield* patch(user, domainId, id, [replace("/delete_on", now + 99)]))).toEqual([
          { code: 10116, message: "setting both archive_on and delete_on is not allowed" }
        ])
        // Clearing archive_on in the same patch makes room for delete_on.
        const swapped = yield* patch(user, domainId, id, [replace("/delete_on", String(now + 99)), replace("/archive_on", null)])
        expect(swapped.status, swapped.text).toBe(200)
        expect(at(swapped.body, "objects", 0)).toMatchObject({ delete_on: now + 99 })
        expect(at(swapped.body, "objects", 0)).not.toHaveProperty("archive_on")
      })
    )

    it.effect("all or nothing: several problems in one answer sorted by code, and nothing changes", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const now = Math.floor(Date.now() / 1000)
        yield* linkOf(user, domainId, { alias: "other" })
        const id = yield* linkOf(user, domainId, { alias: "keep", notes: "old" })
        const before = yield* read(user, domainId, id)
        const many = yield* patch(user, domainId, id, [
          replace("/notes", 5),
          replace("/url", "ftp://x.example"),
          replace("/alias", "OTHER"),
          replace("/delete_on", now - 5),
          { op: "move", path: "/notes" }
        ])
        expect(many.status).toBe(400)
        expect(errors(many)).toEqual([
          { code: 10112, message: "delete_on must be after current time" },
          { code: 10130, message: "Operation given in 4.op not supported" },
          { code: 10132, message: "/url value invalid" },
          { code: 10134, message: "/notes value invalid" },
          { code: 10140, message: "OTHER" }
        ])
        const oneBad = yield* patch(user, domainId, id, [
          replace("/alias", "fresh"),
          replace("/notes", "changed"),
          replace("/url", "https://example.net/"),
          replace("/archive_on", "tomorrow")
        ])
        expect(errors(oneBad)).toEqual([{ code: 10113, message: "archive_on is invalid" }])
        expect(yield* read(user, domainId, id)).toEqual(before)
      })
    )

    it.effect("concurrent updates to one alias: one wins, the others get 10140, never a 500", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const ids = yield* Effect.all(Array.from({ length: 4 }, () => linkOf(user, domainId)))
        const answers = yield* Effect.all(
          ids.map((id, n) => patch(user, domainId, id, [replace("/alias", n % 2 === 0 ? "race" : "RACE")])),
          { concurrency: 4 }
        )
        expect(answers.filter((a) => a.status === 200).length).toBe(1)
        for (const refused of answers.filter((a) => a.status !== 200)) {
          expect(refused.status, refused.text).toBe(400)
          expect(codes(refused)).toEqual([10140])
        }
      })
    )

    it.effect("a path given twice: the last one wins; every one is checked", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const id = yield* linkOf(user, domainId)
        const twice = yield* patch(user, domainId, id, [replace("/notes", "one"), replace("/notes", "two")])
        expect(at(twice.body, "objects", 0, "notes")).toBe("two")
        expect(codes(yield* patch(user, domainId, id, [replace("/notes", 5), replace("/notes", "three")]))).toEqual([10134])
        expect(at(yield* read(user, domainId, id), "notes")).toBe("two")
      })
    )

    it.effect("body: not an array 10130; empty or more than 6 operations 10153", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const id = yield* linkOf(user, domainId)
        for (const body of [replace("/notes", "x"), "x", 5, null]) {
          const reply = yield* patch(user, domainId, id, body)
          expect(reply.status, JSON.stringify(body)).toBe(400)
          expect(errors(reply), JSON.stringify(body)).toEqual([{ code: 10130, message: "Operation body not supported" }])
        }
        const notJson = yield* call("PATCH", `/api/v4/${domainId}/links/${id}`, { token: user.token, rawBody: "[{" })
        expect(notJson.status).toBe(400)
        const empty = yield* patch(user, domainId, id, [])
        expect(empty.status).toBe(400)
        expect(errors(empty)).toEqual([{ code: 10153, message: "body: an array of 1 to 6 operations expected" }])
        expect(codes(yield* patch(user, domainId, id, Array.from({ length: 7 }, () => replace("/notes", "x"))))).toEqual([10153])
        expect((yield* patch(user, domainId, id, Array.from({ length: 6 }, () => replace("/notes", "x")))).status).toBe(200)
      })
    )

    it.effect("visibility as E11: others' links 404 10150 for a plain member, updatable by account and domain admins", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const domainId = yield* domainOf(admin)
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const peer = yield* newUser({ accountId: admin.accountId, role: "member" })
        const domainAdmin = yield* newUser({ accountId: admin.accountId, role: "member" })
        yield* (yield* Accounts).makeDomainAdmin(domainAdmin.userId, domainId).pipe(Effect.orDie)
        const stranger = yield* newUser()
        const id = yield* linkOf(member, domainId)
        const hidden = yield* patch(peer, domainId, id, [replace("/notes", "peer")])
        expect(hidden.status).toBe(404)
        expect(errors(hidden)).toEqual([{ code: 10150, message: "link not found" }])
        const foreign = yield* patch(stranger, domainId, id, [replace("/notes", "stranger")])
        expect(foreign.status).toBe(404)
        expect(codes(foreign)).toEqual([10101])
        for (const [who, notes] of [[member, "by member"], [admin, "by admin"], [domainAdmin, "by domain admin"]] as const) {
          const reply = yield* patch(who, domainId, id, [replace("/notes", notes)])
          expect(reply.status, reply.text).toBe(200)
          expect(at(reply.body, "objects", 0, "notes")).toBe(notes)
        }
        for (const linkId of ["99999999", "abc"]) {
          const missing = yield* patch(admin, domainId, linkId, [replace("/notes", "x")])
          expect(missing.status).toBe(404)
          expect(codes(missing)).toEqual([10150])
        }
        // Not found is answered before the body is looked at.
        expect(codes(yield* patch(peer, domainId, id, [{ op: "bad" }]))).toEqual([10150])
      })
    )

    it.effect("deleted links are not found; archived links can be updated", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const sql = yield* SqlClient.SqlClient
        const deleted = yield* linkOf(user, domainId)
        const archived = yield* linkOf(user, domainId)
        yield* sql`UPDATE links SET status = 'deleted' WHERE id = ${deleted}`
        yield* sql`UPDATE links SET status = 'archived' WHERE id = ${archived}`
        expect(codes(yield* patch(user, domainId, deleted, [replace("/notes", "x")]))).toEqual([10150])
        const reply = yield* patch(user, domainId, archived, [replace("/notes", "still here")])
        expect(reply.status, reply.text).toBe(200)
        expect(at(reply.body, "objects", 0)).toMatchObject({ status: "archived", notes: "still here" })
      })
    )

    it.effect("a new url gets the link's UTM values in redirect_url, in template order", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const templateId = yield* newUtmTemplate(user, domainId, [
            { label: "Source", field_code: "utm_source", type: "text", required: true },
            { label: "Campaign", field_code: "utm_campaign", type: "text", required: false },
            { label: "Medium", field_code: "utm_medium", type: "text", required: false }
          ])
        const id = yield* linkOf(user, domainId, {
          url: "https://example.com/a",
          utm_template_id: templateId,
          utm_fields: { utm_source: "news letter", utm_campaign: "été", utm_medium: "mail" }
        })
        const reply = yield* patch(user, domainId, id, [replace("/url", "https://example.org/b?utm_source=old&x=1#frag")])
        expect(reply.status, reply.text).toBe(200)
        expect(at(reply.body, "objects", 0)).toMatchObject({
          url: "https://example.org/b?utm_source=old&x=1#frag",
          redirect_url: "https://example.org/b?x=1&utm_source=news+letter&utm_campaign=%C3%A9t%C3%A9&utm_medium=mail#frag",
          template_id: templateId
        })
        const notes = yield* patch(user, domainId, id, [replace("/notes", "n")])
        expect(at(notes.body, "objects", 0, "redirect_url")).toBe(at(reply.body, "objects", 0, "redirect_url"))
        const plain = yield* linkOf(user, domainId)
        const noUtm = yield* patch(user, domainId, plain, [replace("/url", "example.net/p")])
        expect(at(noUtm.body, "objects", 0, "redirect_url")).toBe("http://example.net/p")
      })
    )

    it.scoped("a new url is checked: a definite 404 or 410 refuses with 10132; an unchanged url is not fetched", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const missing = yield* answering(404)
        const gone = yield* answering(410)
        const fine = yield* answering(200)
        const id = yield* linkOf(user, domainId)
        for (const url of [missing.url, gone.url]) {
          const reply = yield* patch(user, domainId, id, [replace("/url", url), replace("/notes", "no")])
          expect(errors(reply), url).toEqual([{ code: 10132, message: "/url value invalid" }])
        }
        expect(at(yield* read(user, domainId, id), "notes")).toBe("")
        expect((yield* patch(user, domainId, id, [replace("/url", fine.url)])).status).toBe(200)
        const stays = yield* linkOf(user, domainId, { url: missing.url })
        expect((yield* patch(user, domainId, stays, [replace("/url", missing.url), replace("/notes", "ok")])).status).toBe(200)
      })
    )
  })
})
