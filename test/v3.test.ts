import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { writeClicks } from "./support/Clicks.ts"
import { newDomain, newLink } from "./support/Fixtures.ts"
import { at, call, codes, newUser, numberAt } from "./support/Http.ts"
import { linkTotalsShapes } from "./support/OpenApiShapes.ts"

import { TestServer } from "./support/TestServer.ts"

const DAY = 86_400

describe("version 3", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("create, get, update and by-alias answer objects as one link without notify_on_click; create has no new_link", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* newDomain(user)
        const created = yield* call("POST", `/api/v3/${domainId}/links`, {
          token: user.token,
          body: { url: "https://example.com/v3", alias: "three", notes: "made in v3" }
        })
        expect(created.status).toBe(200)
        const link = at(created.body, "objects") as Record<string, unknown>
        expect(link).toMatchObject({ alias: "three", url: "https://example.com/v3", notes: "made in v3", domain_id: domainId })
        expect(link).not.toHaveProperty("notify_on_click")
        expect(created.body).not.toHaveProperty("new_link")
        const id = numberAt(link, "id")
        const got = yield* call("GET", `/api/v3/${domainId}/links/${id}`, { token: user.token })
        expect(got.body).toEqual({ objects: link })
        const byAlias = yield* call("GET", `/api/v3/${domainId}/links/exists?alias=THREE`, { token: user.token })
        expect(at(byAlias.body, "objects", "id")).toBe(id)
        const updated = yield* call("PATCH", `/api/v3/${domainId}/links/${id}`, {
          token: user.token,
          body: [{ op: "replace", path: "/notes", value: "changed" }]
        })
        expect(updated.status).toBe(200)
        expect(at(updated.body, "objects", "notes")).toBe("changed")
        expect(at(updated.body, "objects")).not.toHaveProperty("notify_on_click")
      })
    )

    it.effect("a link made through one version reads the same through the other", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* newDomain(user)
        const fromV4 = yield* newLink(user, domainId, { alias: "four", tags: [{ name: "both", shared: false }] })
        const v4 = yield* call("GET", `/api/v4/${domainId}/links/${fromV4}`, { token: user.token })
        const v3 = yield* call("GET", `/api/v3/${domainId}/links/${fromV4}`, { token: user.token })
        const { notify_on_click: _, ...withoutNotify } = at(v4.body, "objects", 0) as Record<string, unknown>
        expect(at(v3.body, "objects")).toEqual(withoutNotify)
        const made = yield* call("POST", `/api/v3/${domainId}/links`, { token: user.token, body: { url: "https://example.com/x", alias: "viathree" } })
        const id = numberAt(made.body, "objects", "id")
        const read = yield* call("GET", `/api/v4/${domainId}/links/${id}`, { token: user.token })
        expect({ ...(at(read.body, "objects", 0) as object), notify_on_click: undefined }).toEqual({
          ...(at(made.body, "objects") as object),
          notify_on_click: undefined
        })
        expect(at(read.body, "objects", 0, "notify_on_click")).toBe("0")
      })
    )

    it.effect("create refuses rand_alias_length, override_404_check and notify_on_click, naming each", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* newDomain(user)
        const refused = yield* call("POST", `/api/v3/${domainId}/links`, {
          token: user.token,
          body: { url: "https://example.com/", rand_alias_length: 8, override_404_check: 1, notify_on_click: 1 }
        })
        expect(refused.status).toBe(400)
        expect(refused.body).toEqual({
          errors: [
            { code: 10153, message: "rand_alias_length is not accepted by version 3" },
            { code: 10153, message: "override_404_check is not accepted by version 3" },
            { code: 10153, message: "notify_on_click is not accepted by version 3" }
          ]
        })
        const search = yield* call("GET", `/api/v3/${domainId}/links`, { token: user.token })
        expect(at(search.body, "total")).toBe(0)
        // The usual rules still apply and answer as in version 4.
        const bad = yield* call("POST", `/api/v3/${domainId}/links`, { token: user.token, body: { url: "ftp://example.com/", alias: "a b" } })
        expect(codes(bad)).toEqual(codes(yield* call("POST", `/api/v4/${domainId}/links`, { token: user.token, body: { url: "ftp://example.com/", alias: "a b" } })))
        expect(bad.status).toBe(400)
      })
    )

    it.effect("update: no /notify_on_click (10131); Nd and -Nd day offsets for the dates, with the usual past rules", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* newDomain(user)
        const id = yield* newLink(user, domainId, { alias: "dated" })
        const path = `/api/v3/${domainId}/links/${id}`
        const notify = yield* call("PATCH", path, { token: user.token, body: [{ op: "replace", path: "/notify_on_click", value: 1 }] })
        expect(notify.status).toBe(400)
        expect(notify.body).toEqual({ errors: [{ code: 10131, message: "Modifying path /notify_on_click not supported" }] })
        const before = Math.floor(Date.now() / 1000)
        const inAWeek = yield* call("PATCH", path, { token: user.token, body: [{ op: "replace", path: "/delete_on", value: "7d" }] })
        expect(inAWeek.status).toBe(200)
        const deleteOn = numberAt(inAWeek.body, "objects", "delete_on")
        expect(deleteOn).toBeGreaterThanOrEqual(before + 7 * DAY)
        expect(deleteOn).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 7 * DAY)
        const past = yield* call("PATCH", path, {
          token: user.token,
          body: [{ op: "replace", path: "/delete_on", value: null }, { op: "replace", path: "/archive_on", value: "-2d" }]
        })
        expect(codes(past)).toEqual([10114])
        const now = yield* call("PATCH", path, { token: user.token, body: [{ op: "replace", path: "/delete_on", value: "0d" }] })
        expect(codes(now)).toEqual([10112])
        const archive = yield* call("PATCH", path, {
          token: user.token,
          body: [{ op: "replace", path: "/delete_on", value: null }, { op: "replace", path: "/archive_on", value: "30d" }]
        })
        expect(archive.status).toBe(200)
        expect(numberAt(archive.body, "objects", "archive_on") - before).toBeGreaterThanOrEqual(30 * DAY)
        expect(at(archive.body, "objects")).not.toHaveProperty("delete_on")
        // Version 4 does not take offsets.
        const v4 = yield* call("PATCH", `/api/v4/${domainId}/links/${id}`, { token: user.token, body: [{ op: "replace", path: "/archive_on", value: "7d" }] })
        expect(codes(v4)).toEqual([10113])
      })
    )

    it.effect("domains carry only id, domain, created, modified, default and type", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* newDomain(user)
        const list = yield* call("GET", "/api/v3/domains", { token: user.token })
        expect(Object.keys(at(list.body, "objects", 0) as object).sort()).toEqual(["created", "default", "domain", "id", "modified", "type"])
        const one = yield* call("GET", `/api/v3/domains/${domainId}`, { token: user.token })
        expect(Object.keys(at(one.body, "objects", 0) as object).sort()).toEqual(["created", "default", "domain", "id", "modified", "type"])
        expect(at(one.body, "meta", "path")).toMatch(new RegExp(`/api/v3/domains/${domainId}$`))
        expect(at(one.body, "meta", "per_page")).toBe(20)
      })
    )

    it.effect("lists and reports hold 20 a page, with version 3 URLs in meta and links", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* newDomain(user)
        const ids: Array<number> = []
        for (let n = 0; n < 25; n++) ids.push(yield* newLink(user, domainId, { alias: `p${n}` }))
        const v3 = yield* call("GET", `/api/v3/${domainId}/links?page=2`, { token: user.token })
        expect(at(v3.body, "meta")).toMatchObject({ current_page: 2, per_page: 20, last_page: 2, from: 21, to: 25, total: 25 })
        expect((at(v3.body, "objects") as ReadonlyArray<{ id: number }>).map((link) => link.id)).toEqual(ids.slice(20))
        expect(at(v3.body, "objects", 0)).not.toHaveProperty("notify_on_click")
        expect(at(v3.body, "meta", "path")).toMatch(new RegExp(`/api/v3/${domainId}/links$`))
        const v4 = yield* call("GET", `/api/v4/${domainId}/links`, { token: user.token })
        expect(at(v4.body, "meta", "per_page")).toBe(50)
        yield* writeClicks([{ linkId: ids[0]!, domainId, at: Date.UTC(2025, 0, 1) / 1000 }])
        const daily = yield* call("GET", `/api/v3/${domainId}/clicks/daily?from_unix=${Date.UTC(2025, 0, 1) / 1000}`, { token: user.token })
        expect(daily.status).toBe(200)
        expect((at(daily.body, "objects") as ReadonlyArray<unknown>).length).toBe(20)
        expect(at(daily.body, "objects", 0)).toMatchObject({ date: "2025-01-01", count: 1 })
        expect(at(daily.body, "meta")).toMatchObject({ per_page: 20, total: 365, last_page: 19 })
        expect(at(daily.body, "links", "next")).toMatch(new RegExp(`/api/v3/${domainId}/clicks/daily\\?from_unix=\\d+&page=2$`))
        const totals = yield* call("GET", `/api/v3/${domainId}/links/${ids[0]}/clicks`, { token: user.token })
        expect(totals.body).toEqual({ total: 1, unique: 1, scan_count: 0 })
        const windowed = yield* call("GET", `/api/v3/${domainId}/links/${ids[0]}/clicks?from_unix=${Date.UTC(2025, 0, 1) / 1000}`, {
          token: user.token
        })
        expect(windowed.body).toEqual({ count: 1 })
        expect(codes(yield* call("GET", `/api/v3/${domainId}/links/${ids[0]}/clicks?to_unix=1`, { token: user.token }))).toEqual([10503])
      })
    )

    it.effect("E5 takes the url plain or URL-encoded and answers its stored form, as in version 4", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const validate = (url: string) => call("POST", "/api/v3/links/validate", { token: user.token, body: { url } })
        expect((yield* validate("https%3A%2F%2FExample.com%2Fa%3Fb%3Dc")).body).toEqual({ objects: [{ url: "https://example.com/a?b=c" }] })
        expect((yield* validate("Example.com/a")).body).toEqual({ objects: [{ url: "http://example.com/a" }] })
        expect((yield* validate("https://example.com/a%2Fb")).body).toEqual({ objects: [{ url: "https://example.com/a%2Fb" }] })
        const bad = yield* validate("ftp%3A%2F%2Fexample.com%2F")
        expect([bad.status, codes(bad)]).toEqual([400, [10100]])
      })
    )

    it.effect("errors, authentication and unknown routes answer as in version 4; /api/v3/openapi.json describes version 3", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        expect(codes(yield* call("GET", "/api/v3/domains"))).toEqual([10000])
        expect(codes(yield* call("GET", "/api/v3/nowhere", { token: user.token }))).toEqual([10151])
        expect(codes(yield* call("GET", "/api/v3/domains/999999", { token: user.token }))).toEqual([10101])
        const login = yield* call("POST", "/api/v3/access_token", { body: { email: user.email, password: "correct horse battery staple" } })
        expect(at(login.body, "access_token")).toBe(user.token)
        const errors = yield* call("GET", "/api/v3/error_codes")
        expect(errors.body).toEqual((yield* call("GET", "/api/v4/error_codes")).body)
        const doc = yield* call("GET", "/api/v3/openapi.json")
        expect(doc.status).toBe(200)
        expect(at(doc.body, "info", "version")).toBe("3")
        const paths = Object.keys(at(doc.body, "paths") as object)
        expect(paths).toContain("/api/v3/{domain_id}/links")
        expect(paths.every((path) => path.startsWith("/api/v3/"))).toBe(true)
        expect(at(doc.body, "components", "schemas", "Link", "properties")).not.toHaveProperty("notify_on_click")
        expect(Object.keys(at(doc.body, "components", "schemas", "Domain", "properties") as object).sort()).toEqual([
          "created",
          "default",
          "domain",
          "id",
          "modified",
          "type"
        ])
        const createSchema = at(doc.body, "paths", "/api/v3/{domain_id}/links", "post", "requestBody", "content", "application/json", "schema", "properties")
        expect(createSchema).toHaveProperty("url")
        expect(createSchema).not.toHaveProperty("rand_alias_length")
        expect(at(doc.body, "components", "schemas", "LinkList", "properties", "objects")).toEqual({ $ref: "#/components/schemas/Link" })
        expect(linkTotalsShapes(doc.body, "/api/v3")).toEqual([["scan_count", "total", "unique"], ["count"]])
      })
    )
  })
})
