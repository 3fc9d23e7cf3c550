import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Tags } from "../src/Tags/Tags.ts"
import { at, call, callerOf, codes, newUser } from "./support/Http.ts"
import { newDomain as domainOf, newUtmTemplate } from "./support/Fixtures.ts"
import { documentedCodes } from "./support/OpenApiShapes.ts"
import { TestServer } from "./support/TestServer.ts"

const names = (reply: { body: unknown }) => (at(reply.body, "objects") as ReadonlyArray<unknown>).map((t) => at(t, "name"))

describe("tags (T1, T2) and UTM templates (E15)", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("T2 creates a tag; names are unique per domain ignoring case (10308)", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const reply = yield* call("POST", "/api/v4/tags", {
          token: user.token,
          body: { domain_id: domainId, name: "  Promo ", shared: true, notes: "spring" }
        })
        expect(reply.status, reply.text).toBe(200)
        expect(at(reply.body, "objects", 0)).toMatchObject({ domain_id: domainId, user_id: user.userId, name: "Promo", shared: true, notes: "spring" })
        const again = yield* call("POST", "/api/v4/tags", { token: user.token, body: { domain_id: String(domainId), name: "PROMO" } })
        expect(again.status).toBe(400)
        expect(again.body).toEqual({ errors: [{ code: 10308, message: "tag name already exists" }] })
        const elsewhere = yield* call("POST", "/api/v4/tags", { token: user.token, body: { domain_id: yield* domainOf(user), name: "promo" } })
        expect(elsewhere.status).toBe(200)
      })
    )

    it.effect("T2 reports each bad field with its code (10300-10307)", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const post = (body: unknown) => call("POST", "/api/v4/tags", { token: user.token, body })
        expect(codes(yield* post({ name: "x" }))).toEqual([10300])
        expect(codes(yield* post({ domain_id: "abc", name: "x" }))).toEqual([10301])
        expect(codes(yield* post({ domain_id: domainId }))).toEqual([10303])
        for (const name of ["", "   ", 5, "x".repeat(51), "a\u0000b"]) {
          expect(codes(yield* post({ domain_id: domainId, name })), JSON.stringify(name)).toEqual([10304])
        }
        expect(codes(yield* post({ domain_id: domainId, name: "x", shared: "yes" }))).toEqual([10305])
        expect(codes(yield* post({ domain_id: domainId, name: "x", notes: 5 }))).toEqual([10306])
        expect(codes(yield* post({ domain_id: domainId, name: "x", notes: "n".repeat(1001) }))).toEqual([10307])
        expect(codes(yield* post({ domain_id: "abc", shared: 1, notes: 2 }))).toEqual([10301, 10303, 10305, 10306])
        const stranger = yield* newUser()
        const foreign = yield* call("POST", "/api/v4/tags", { token: stranger.token, body: { domain_id: domainId, name: "x" } })
        expect(foreign.status).toBe(404)
        expect(codes(foreign)).toEqual([10301])
      })
    )

    it.effect("T1 lists shared tags and the caller's own, filtered by search; others' private tags stay hidden", () =>
      Effect.gen(function* () {
        const owner = yield* newUser()
        const colleague = yield* newUser({ accountId: owner.accountId, role: "member" })
        const domainId = yield* domainOf(owner)
        for (const [user, name, shared] of [[owner, "beta", true], [owner, "Alpha", false], [colleague, "gamma-alpha", false]] as const) {
          expect((yield* call("POST", "/api/v4/tags", { token: user.token, body: { domain_id: domainId, name, shared } })).status).toBe(200)
        }
        expect(names(yield* call("GET", `/api/v4/tags?domain_id=${domainId}`, { token: owner.token }))).toEqual(["Alpha", "beta"])
        expect(names(yield* call("GET", `/api/v4/tags?domain_id=${domainId}`, { token: colleague.token }))).toEqual(["beta", "gamma-alpha"])
        expect(names(yield* call("GET", `/api/v4/tags?domain_id=${domainId}&search=ALP`, { token: colleague.token }))).toEqual(["gamma-alpha"])
        expect(codes(yield* call("GET", "/api/v4/tags", { token: owner.token }))).toEqual([10300])
        expect(codes(yield* call("GET", "/api/v4/tags?domain_id=x", { token: owner.token }))).toEqual([10301])
        expect(codes(yield* call("GET", `/api/v4/tags?domain_id=${domainId}&search=${"s".repeat(101)}`, { token: owner.token }))).toEqual([10302])
        const stranger = yield* newUser()
        expect((yield* call("GET", `/api/v4/tags?domain_id=${domainId}`, { token: stranger.token })).status).toBe(404)
      })
    )

    it.effect("tags given on E4 appear in T1 as the creator's tags", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        yield* call("POST", `/api/v4/${domainId}/links`, {
          token: user.token,
          body: { url: "https://example.com/", override_404_check: 1, tags: [{ name: "fromlink" }] }
        })
        expect(names(yield* call("GET", `/api/v4/tags?domain_id=${domainId}`, { token: user.token }))).toEqual(["fromlink"])
      })
    )

    it.effect("E15 lists the domain's UTM templates; 10200 missing, 10201 invalid or unknown", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const fields = [{ label: "Source", field_code: "utm_source", type: "text", required: true }]
        yield* newUtmTemplate(user, domainId, fields)
        const reply = yield* call("GET", `/api/v4/utm_templates?domain_id=${domainId}`, { token: user.token })
        expect(reply.status).toBe(200)
        expect(reply.body).toEqual({ objects: [{ id: expect.any(Number), name: "news", fields }] })
        expect(codes(yield* call("GET", "/api/v4/utm_templates", { token: user.token }))).toEqual([10200])
        expect(codes(yield* call("GET", "/api/v4/utm_templates?domain_id=0", { token: user.token }))).toEqual([10201])
        const stranger = yield* newUser()
        const foreign = yield* call("GET", `/api/v4/utm_templates?domain_id=${domainId}`, { token: stranger.token })
        expect(foreign.status).toBe(404)
        expect(codes(foreign)).toEqual([10201])
      })
    )

    it.effect("the OpenAPI document lists, per operation, the codes each status can carry", () =>
      Effect.gen(function* () {
        const document = (yield* call("GET", "/api/v4/openapi.json")).body
        expect(documentedCodes(document, "/api/v4/tags", "post", "400")).toEqual(
          expect.arrayContaining([10153, 10300, 10301, 10303, 10304, 10305, 10306, 10307, 10308])
        )
        expect(documentedCodes(document, "/api/v4/tags", "post", "404")).toEqual([10301])
        expect(documentedCodes(document, "/api/v4/tags", "post", "401")).toEqual([10000])
        expect(documentedCodes(document, "/api/v4/tags", "get", "400")).toEqual(expect.arrayContaining([10300, 10301, 10302]))
        expect(documentedCodes(document, "/api/v4/tags", "get", "404")).toEqual([10301])
        expect(documentedCodes(document, "/api/v4/utm_templates", "get", "400")).toEqual(expect.arrayContaining([10200, 10201]))
        expect(documentedCodes(document, "/api/v4/utm_templates", "get", "404")).toEqual([10201])
      })
    )

    it.effect("the Tags service is usable without HTTP: failures are tagged, with their code and message", () =>
      Effect.gen(function* () {
        const tags = yield* Tags
        const user = yield* newUser()
        const domainId = yield* domainOf(user)
        const caller = callerOf(user)
        const tag = yield* tags.create(caller, { domain_id: domainId, name: " Launch ", shared: true })
        expect(tag).toMatchObject({ domain_id: domainId, user_id: user.userId, name: "Launch", shared: true, notes: "" })
        const again = yield* tags.create(caller, { domain_id: domainId, name: "LAUNCH" }).pipe(
          Effect.as("created"),
          Effect.catchTag("TagNameExists", (failure) => Effect.succeed(`${failure.code} ${failure.message}`))
        )
        expect(again).toBe("10308 tag name already exists")
        const invalid = yield* Effect.flip(tags.create(caller, { domain_id: domainId, name: " ", notes: "n".repeat(1001) }))
        expect(invalid).toMatchObject({ _tag: "InvalidInput", problems: [{ code: 10304 }, { code: 10307 }] })
        const stranger = { ...caller, userId: caller.userId + 1_000_000, accountId: caller.accountId + 1_000_000 }
        const hidden = yield* Effect.flip(tags.list(stranger, domainId, ""))
        expect(hidden).toMatchObject({ _tag: "TagDomainNotFound", code: 10301, message: "domain_id is invalid" })
        expect((yield* tags.list(caller, domainId, "laun")).map((found) => found.name)).toEqual(["Launch"])
      })
    )
  })
})
