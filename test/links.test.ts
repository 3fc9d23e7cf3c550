import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Accounts } from "../src/Accounts/Accounts.ts"
import type { Caller } from "../src/Accounts/User.ts"
import { Links } from "../src/Links/Links.ts"
import { QrRenderer } from "../src/Links/QrRenderer.ts"
import { at, call, codes, newUser, numberAt, stringAt, type TestUser } from "./support/Http.ts"
import { answering, newDomain as domainOf, newUtmTemplate } from "./support/Fixtures.ts"
import { documentedCodes } from "./support/OpenApiShapes.ts"
import { TestServer } from "./support/TestServer.ts"

const create = (user: TestUser, domainId: number | string, body: unknown) =>
  call("POST", `/api/v4/${domainId}/links`, { token: user.token, body })

describe("links: E4 create, E5 validate, E11 by id, E13 by alias", () => {
  layer(TestServer({ URL_CHECK_ALLOW_PRIVATE: "true" }), { excludeTestServices: true })((it) => {
    it.effect("E4 creates a link with every field and answers it as objects + new_link", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const future = Math.floor(Date.now() / 1000) + 3600
        const reply = yield* create(user, domainId, {
          url: "Example.com/Path?q=1",
          alias: "My-Alias_1.x",
          notes: "first link",
          notify_on_click: 1,
          redirect_type: 307,
          archive_on: future,
          override_404_check: 1,
          tags: [{ name: "promo", shared: true }, { name: "Spring" }]
        })
        expect(reply.status, reply.text).toBe(200)
        expect(at(reply.body, "new_link")).toBe(1)
        const link = at(reply.body, "objects", 0)
        const domain = stringAt((yield* call("GET", `/api/v4/domains/${domainId}`, { token: user.token })).body, "objects", 0, "domain")
        expect(link).toMatchObject({
          url: "http://example.com/Path?q=1",
          alias: "My-Alias_1.x",
          short_link: `http://${domain}/My-Alias_1.x`,
          redirect_url: "http://example.com/Path?q=1",
          user_id: user.userId,
          domain_id: domainId,
          click_count: 0,
          notify_on_click: "1",
          notes: "first link",
          redirect_type: 307,
          status: "active",
          archive_on: future,
          tags: [{ name: "promo", shared: true }, { name: "Spring", shared: false }],
          groups: []
        })
        // Unset values are left out, never null: clients generated from the real API's document type them as integers.
        expect(link).not.toHaveProperty("template_id")
        expect(link).not.toHaveProperty("delete_on")
        expect(numberAt(link, "modified")).toBe(numberAt(link, "created"))
      })
    )

    it.effect("E4 generates an alias of rand_alias_length from an unambiguous alphabet, 6 by default", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        for (const [length, expected] of [[undefined, 6], [4, 4], [40, 40]] as const) {
          const reply = yield* create(user, domainId, { url: "https://example.com/", override_404_check: 1, rand_alias_length: length })
          const alias = stringAt(reply.body, "objects", 0, "alias")
          expect(alias.length).toBe(expected)
          expect(alias).not.toMatch(/[0O1lI]/)
        }
      })
    )

    it.effect("E4 ignores rand_alias_length when an alias is given", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const reply = yield* create(user, domainId, { url: "https://example.com/", override_404_check: 1, alias: "given", rand_alias_length: 99 })
        expect(reply.status, reply.text).toBe(200)
        expect(at(reply.body, "objects", 0, "alias")).toBe("given")
        expect(codes(yield* create(user, domainId, { url: "https://example.com/", override_404_check: 1, rand_alias_length: 99 }))).toEqual([10102])
      })
    )

    it.effect("E4 reports every wrong field with its own code in one answer", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const reply = yield* create(user, domainId, {
          url: "javascript:alert(1)",
          alias: "bad alias!",
          notes: "x".repeat(1001),
          redirect_type: 302,
          delete_on: 5
        })
        expect(reply.status).toBe(400)
        expect(codes(reply)).toEqual([10100, 10102, 10106, 10112, 10115])
      })
    )

    it.effect("E4 alias rules: too long 10103, reserved 10104, taken (ignoring case) 10104, freed by nothing else", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const base = { url: "https://example.com/", override_404_check: 1 }
        expect(codes(yield* create(user, domainId, { ...base, alias: "a".repeat(41) }))).toEqual([10103])
        expect(codes(yield* create(user, domainId, { ...base, alias: "API" }))).toEqual([10104])
        expect((yield* create(user, domainId, { ...base, alias: "Taken" })).status).toBe(200)
        const taken = yield* create(user, domainId, { ...base, alias: "tAKEN" })
        expect(taken.status).toBe(400)
        expect(codes(taken)).toEqual([10104])
        const otherDomain = yield* domainOf(user)
        expect((yield* create(user, otherDomain, { ...base, alias: "taken" })).status).toBe(200)
      })
    )

    it.effect("E4 url and date rules (10100, 10111-10116)", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const now = Math.floor(Date.now() / 1000)
        const base = { override_404_check: 1 }
        for (const url of [undefined, "", 5, "ftp://x.example", "https://user:pw@x.example/", "https://x.example/a b", "http://x.example/\r\n", `https://x.example/${"a".repeat(4100)}`]) {
          expect(codes(yield* create(user, domainId, { ...base, url })), String(url).slice(0, 40)).toEqual([10100])
        }
        const url = "https://example.com/"
        expect(codes(yield* create(user, domainId, { ...base, url, delete_on: "soon" }))).toEqual([10111])
        expect(codes(yield* create(user, domainId, { ...base, url, delete_on: now - 10 }))).toEqual([10112])
        expect(codes(yield* create(user, domainId, { ...base, url, archive_on: "x" }))).toEqual([10113])
        expect(codes(yield* create(user, domainId, { ...base, url, archive_on: now - 10 }))).toEqual([10114])
        expect(codes(yield* create(user, domainId, { ...base, url, archive_on: now + 99, delete_on: now + 99 }))).toEqual([10116])
        const asString = yield* create(user, domainId, { ...base, url, delete_on: String(now + 500) })
        expect(at(asString.body, "objects", 0, "delete_on")).toBe(now + 500)
      })
    )

    it.scoped("E4 404 check: a definite 404 or 410 refuses with 10100, other answers pass, override skips it", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const missing = yield* answering(404)
        const gone = yield* answering(410)
        const broken = yield* answering(500)
        expect(codes(yield* create(user, domainId, { url: missing.url }))).toEqual([10100])
        expect(codes(yield* create(user, domainId, { url: gone.url }))).toEqual([10100])
        expect(missing.hits()).toBeGreaterThan(0)
        expect((yield* create(user, domainId, { url: broken.url })).status).toBe(200)
        const before = missing.hits()
        expect((yield* create(user, domainId, { url: missing.url, override_404_check: 1 })).status).toBe(200)
        expect(missing.hits()).toBe(before)
      })
    )

    it.effect("E4 dupe_check returns the caller's existing link with new_link false", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const body = { url: "https://example.com/dupe", override_404_check: 1 }
        const first = yield* create(user, domainId, body)
        const again = yield* create(user, domainId, { ...body, dupe_check: 1 })
        expect(at(again.body, "new_link")).toBe(0)
        expect(at(again.body, "objects", 0, "id")).toBe(at(first.body, "objects", 0, "id"))
        const fresh = yield* create(user, domainId, body)
        expect(at(fresh.body, "new_link")).toBe(1)
        expect(at(fresh.body, "objects", 0, "id")).not.toBe(at(first.body, "objects", 0, "id"))
        const colleague = yield* newUser({ accountId: user.accountId, role: "member" })
        const theirs = yield* create(colleague, domainId, { ...body, dupe_check: 1 })
        expect(at(theirs.body, "new_link")).toBe(1)
      })
    )

    it.effect("E4 UTM template: fields appended to redirect_url; bad template 10108/10109, bad fields 10110", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const templateId = yield* newUtmTemplate(user, domainId, [
            { label: "Source", field_code: "utm_source", type: "text", required: true },
            { label: "Campaign", field_code: "utm_campaign", type: "text", required: false }
          ])
        const base = { url: "https://example.com/p?x=1#top", override_404_check: 1 }
        const reply = yield* create(user, domainId, {
          ...base,
          utm_template_id: templateId,
          utm_fields: { utm_source: "news letter", utm_campaign: "été" }
        })
        expect(reply.status, reply.text).toBe(200)
        expect(at(reply.body, "objects", 0, "template_id")).toBe(templateId)
        expect(at(reply.body, "objects", 0, "url")).toBe("https://example.com/p?x=1#top")
        expect(at(reply.body, "objects", 0, "redirect_url")).toBe(
          "https://example.com/p?x=1&utm_source=news+letter&utm_campaign=%C3%A9t%C3%A9#top"
        )
        expect(codes(yield* create(user, domainId, { ...base, utm_template_id: "abc" }))).toEqual([10108])
        expect(codes(yield* create(user, domainId, { ...base, utm_template_id: 999999 }))).toEqual([10109])
        expect(codes(yield* create(user, domainId, { ...base, utm_template_id: templateId, utm_fields: {} }))).toEqual([10110])
        expect(codes(yield* create(user, domainId, { ...base, utm_template_id: templateId, utm_fields: { utm_source: "a", bogus: "b" } }))).toEqual([10110])
      })
    )

    it.effect("E4 tags must be an array of {name, shared}: 10107", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        for (const tags of ["promo", [{ shared: true }], [{ name: "" }], [{ name: 5 }], [{ name: "ok", shared: "yes" }]]) {
          expect(codes(yield* create(user, domainId, { url: "https://example.com/", override_404_check: 1, tags })), JSON.stringify(tags)).toEqual([10107])
        }
      })
    )

    it.effect("E4 plan quota: creation fails with 10144 once the account has link_quota links", () =>
      Effect.gen(function* () {
        const accounts = yield* Accounts
        const account = yield* accounts.createAccount({ name: "quota", plan: "team", linkQuota: 2 }).pipe(Effect.orDie)
        const user = yield* newUser({ accountId: account.id })
        const domainId = yield* domainOf(user)
        const body = { url: "https://example.com/", override_404_check: 1 }
        const answers = yield* Effect.all(Array.from({ length: 4 }, () => create(user, domainId, body)), { concurrency: 4 })
        expect(answers.filter((a) => a.status === 200).length).toBe(2)
        for (const refused of answers.filter((a) => a.status !== 200)) {
          expect(refused.body).toEqual({ errors: [{ code: 10144, message: "You have exhausted the limits of your current plan" }] })
        }
      })
    )

    it.effect("E4 domain: non-numeric 400 10101, unknown, another account's or disabled 404 10101", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const stranger = yield* newUser()
        const theirs = yield* domainOf(stranger)
        const body = { url: "https://example.com/", override_404_check: 1 }
        const invalid = yield* create(user, "abc", body)
        expect(invalid.status).toBe(400)
        expect(codes(invalid)).toEqual([10101])
        for (const id of [theirs, 99999999]) {
          const reply = yield* create(user, id, body)
          expect(reply.status).toBe(404)
          expect(codes(reply)).toEqual([10101])
        }
        const mine = yield* domainOf(user)
        yield* call("PATCH", `/api/v4/domains/${mine}`, { token: user.token, body: { op: "replace", path: "status", value: "disabled" } })
        expect((yield* create(user, mine, body)).status).toBe(404)
      })
    )

    it.effect("E5 validates and normalises a URL, plain or URL-encoded; a plain URL's own escapes stay", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const validate = (url: unknown) => call("POST", "/api/v4/links/validate", { token: user.token, body: { url } })
        const answers: ReadonlyArray<readonly [string, string]> = [
          ["Example.com/a%20b", "http://example.com/a%20b"],
          ["https://example.com/a%2Fb?next=%3A", "https://example.com/a%2Fb?next=%3A"],
          ["https%3A%2F%2FExample.com%2Fa%3Fb%3Dc", "https://example.com/a?b=c"],
          ["https%3a%2f%2fexample.com%2fa%2Fb", "https://example.com/a/b"],
          // Decoded once: the escape inside the encoded value stays an escape.
          ["Example.com%2Fa%2520b", "http://example.com/a%20b"]
        ]
        for (const [url, stored] of answers) {
          const ok = yield* validate(url)
          expect(ok.status, url).toBe(200)
          expect(ok.body, url).toEqual({ objects: [{ url: stored }] })
        }
        for (const url of [
          "javascript:x",
          "",
          7,
          "javascript%3Aalert(1)",
          "ftp%3A%2F%2Fexample.com%2F",
          "https%3A%2F%2F",
          "https%3A%2F%2Fexample.com%2Fa%20b",
          "https%253A%252F%252Fexample.com",
          "https%3A%2F%2Fexample.com%2F%E0%A4%A"
        ]) {
          const bad = yield* validate(url)
          expect(bad.status, String(url)).toBe(400)
          expect(codes(bad), String(url)).toEqual([10100])
        }
        expect(codes(yield* call("POST", "/api/v4/links/validate", { token: user.token, body: {} }))).toEqual([10100])
      })
    )

    it.effect("host labels over 63 characters and hosts over 253 are refused: E4 10100, E5 10100, E12 10132", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const id = numberAt((yield* create(user, domainId, { url: "https://example.com/", override_404_check: 1 })).body, "objects", 0, "id")
        const longest = `https://${"a".repeat(63)}.example/x`
        for (const url of [`https://${"a".repeat(300)}.example/x`, `https://${`${"a".repeat(61)}.`.repeat(4)}abcdef/`, `https://${"a".repeat(64)}.example/`]) {
          expect(codes(yield* create(user, domainId, { url, override_404_check: 1 })), url).toEqual([10100])
          expect(codes(yield* call("POST", "/api/v4/links/validate", { token: user.token, body: { url } })), url).toEqual([10100])
          expect(codes(yield* call("POST", "/api/v4/links/validate", { token: user.token, body: { url: encodeURIComponent(url) } })), url).toEqual([10100])
          const patched = yield* call("PATCH", `/api/v4/${domainId}/links/${id}`, { token: user.token, body: [{ op: "replace", path: "/url", value: url }] })
          expect(codes(patched), url).toEqual([10132])
        }
        expect((yield* call("POST", "/api/v4/links/validate", { token: user.token, body: { url: longest } })).body).toEqual({ objects: [{ url: longest }] })
      })
    )

    it.effect("E5 answers the form E4 stores; E4 takes its url as given, never decoded", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const validated = yield* call("POST", "/api/v4/links/validate", { token: user.token, body: { url: "HTTPS%3A%2F%2FExample.com%3A443%2Fx%3Fy%3D1" } })
        const url = stringAt(validated.body, "objects", 0, "url")
        expect(url).toBe("https://example.com/x?y=1")
        const created = yield* create(user, domainId, { url: "HTTPS://Example.com:443/x?y=1", override_404_check: 1 })
        expect(stringAt(created.body, "objects", 0, "url")).toBe(url)
        const literal = yield* create(user, domainId, { url: "https://example.com/a%3Ab%2Fc", override_404_check: 1 })
        expect(stringAt(literal.body, "objects", 0, "url")).toBe("https://example.com/a%3Ab%2Fc")
        const encoded = yield* create(user, domainId, { url: "https%3A%2F%2Fexample.com%2Fa", override_404_check: 1 })
        expect(encoded.status).toBe(400)
        expect(codes(encoded)).toEqual([10100])
      })
    )

    it.effect("E11 and E13: by id and by alias (ignoring case); others' links only for domain and account admins", () =>
      Effect.gen(function* () {
        const admin = yield* newUser()
        const domainId = yield* domainOf(admin)
        const member = yield* newUser({ accountId: admin.accountId, role: "member" })
        const domainAdmin = yield* newUser({ accountId: admin.accountId, role: "member" })
        const accounts = yield* Accounts
        yield* accounts.makeDomainAdmin(domainAdmin.userId, domainId).pipe(Effect.orDie)
        const stranger = yield* newUser()
        const created = yield* create(member, domainId, { url: "https://example.com/", alias: "Mine", override_404_check: 1 })
        const id = numberAt(created.body, "objects", 0, "id")
        for (const viewer of [member, admin, domainAdmin]) {
          const byId = yield* call("GET", `/api/v4/${domainId}/links/${id}`, { token: viewer.token })
          expect(byId.status).toBe(200)
          expect(at(byId.body, "objects", 0, "alias")).toBe("Mine")
          const byAlias = yield* call("GET", `/api/v4/${domainId}/links/exists?alias=mINE`, { token: viewer.token })
          expect(at(byAlias.body, "objects", 0, "id")).toBe(id)
        }
        const peer = yield* newUser({ accountId: admin.accountId, role: "member" })
        for (const path of [`/api/v4/${domainId}/links/${id}`, `/api/v4/${domainId}/links/exists?alias=Mine`]) {
          const hidden = yield* call("GET", path, { token: peer.token })
          expect(hidden.status).toBe(404)
          expect(codes(hidden)).toEqual([10150])
          const foreign = yield* call("GET", path, { token: stranger.token })
          expect(foreign.status).toBe(404)
          expect(codes(foreign)).toEqual([10101])
        }
        for (const path of [`/api/v4/${domainId}/links/99999999`, `/api/v4/${domainId}/links/abc`, `/api/v4/${domainId}/links/exists?alias=nope`]) {
          const reply = yield* call("GET", path, { token: admin.token })
          expect(reply.status, path).toBe(404)
          expect(codes(reply), path).toEqual([10150])
        }
      })
    )

    it.effect("the OpenAPI document lists, per operation, the codes each status can carry (E4, E12)", () =>
      Effect.gen(function* () {
        const document = (yield* call("GET", "/api/v4/openapi.json")).body
        const create = "/api/v4/{domain_id}/links"
        const update = "/api/v4/{domain_id}/links/{link_id}"
        expect(documentedCodes(document, create, "post", "400")).toEqual(
          expect.arrayContaining([
            10100, 10101, 10102, 10103, 10104, 10105, 10106, 10107, 10108, 10109, 10110, 10111, 10112, 10113, 10114, 10115,
            10116, 10144, 10153
          ])
        )
        expect(documentedCodes(document, create, "post", "404")).toEqual([10101, 10150])
        expect(documentedCodes(document, create, "post", "500")).toContain(10142)
        expect(documentedCodes(document, update, "patch", "400")).toEqual(
          expect.arrayContaining([10111, 10112, 10113, 10114, 10116, 10130, 10131, 10132, 10133, 10134, 10135, 10140, 10153])
        )
        expect(documentedCodes(document, update, "patch", "404")).toEqual([10101, 10150])
        expect(documentedCodes(document, update, "get", "404")).toEqual([10101, 10150])
      })
    )

    it.effect("the Links service is usable without HTTP: failures are tagged, with their code and message", () =>
      Effect.gen(function* () {
        const links = yield* Links
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const caller: Caller = {
          userId: user.userId,
          accountId: user.accountId,
          email: user.email,
          nickname: "user",
          role: "account_admin",
          plan: "enterprise",
          linkQuota: null
        }
        const created = yield* links.create(caller, domainId, { url: "https://example.com/svc", alias: "svc", override_404_check: true })
        expect(created).toMatchObject({ created: true, link: { alias: "svc", url: "https://example.com/svc" } })
        const taken = yield* Effect.flip(links.create(caller, domainId, { url: "https://example.com/", alias: "SVC", override_404_check: true }))
        expect(taken).toMatchObject({ _tag: "AliasTaken", code: 10104, message: "alias is not allowed" })
        // The service takes its input typed; the rules still report every problem.
        const invalid = yield* Effect.flip(links.create(caller, domainId, { url: "ftp://x.example", delete_on: 5 }))
        expect(invalid).toMatchObject({ _tag: "InvalidInput", problems: [{ code: 10100 }, { code: 10112 }] })
        const updated = yield* links.update(caller, domainId, created.link.id, [{ op: "replace", path: "/notes", value: "by the service" }])
        expect(updated.notes).toBe("by the service")
        const missing = yield* links.get(caller, domainId, created.link.id + 1_000_000).pipe(
          Effect.as("found"),
          Effect.catchTag("LinkNotFound", (failure) => Effect.succeed(failure.code))
        )
        expect(missing).toBe(10150)
      })
    )
  })
})

describe("links: E14 QR", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("E14 serves png (default), svg and eps of short_link?qr=1; other formats 10600", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const created = yield* create(user, domainId, { url: "https://example.com/", alias: "qr-me", override_404_check: 1 })
        const id = numberAt(created.body, "objects", 0, "id")
        const base = `/api/v4/${domainId}/links/${id}/qr`
        const png = yield* call("GET", base, { token: user.token })
        expect(png.status).toBe(200)
        expect(png.headers.get("content-type")).toBe("image/png")
        const svg = yield* call("GET", `${base}?format=svg`, { token: user.token })
        expect(svg.headers.get("content-type")).toBe("image/svg+xml")
        expect(svg.text).toContain("<svg")
        const eps = yield* call("GET", `${base}?format=eps`, { token: user.token })
        expect(eps.headers.get("content-type")).toBe("application/postscript")
        expect(eps.text.startsWith("%!PS-Adobe-3.0 EPSF-3.0")).toBe(true)
        const renderer = yield* QrRenderer
        const shortLink = stringAt(created.body, "objects", 0, "short_link")
        const expected = yield* renderer.render(`${shortLink}?qr=1`, "svg")
        expect(svg.text).toBe(new TextDecoder().decode(expected.body))
        const bad = yield* call("GET", `${base}?format=gif`, { token: user.token })
        expect(bad.status).toBe(400)
        expect(codes(bad)).toEqual([10600])
        const missing = yield* call("GET", `/api/v4/${domainId}/links/99999999/qr`, { token: user.token })
        expect(codes(missing)).toEqual([10150])
      })
    )
  })
})
