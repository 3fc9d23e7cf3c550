import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Api } from "../src/Api.ts"
import { isPlainObject } from "../src/Links/InputValues.ts"
import { at, call, newUser, numberAt, type Reply } from "./support/Http.ts"
import { BaseUrl, TestServer } from "./support/TestServer.ts"

type Json = Readonly<Record<string, unknown>>
const object = (value: unknown): Json => (isPlainObject(value) ? value : {})

/** The JSON schema of an operation's request body, with `#/components/schemas` references followed. */
const requestBody = (document: unknown, path: string) => {
  const resolve = (schema: unknown): Json => {
    const ref = object(schema).$ref
    return typeof ref === "string" ? object(object(object(object(document).components).schemas)[ref.split("/").at(-1) ?? ""]) : object(schema)
  }
  const body = resolve(object(object(object(object(object(object(object(document).paths)[path]).post).requestBody).content)["application/json"]).schema)
  /** A property's alternatives, nested anyOf flattened and null left out, each resolved. */
  const alternatives = (name: string): ReadonlyArray<Json> => {
    const flat = (schema: unknown): ReadonlyArray<Json> => {
      const resolved = object(schema)
      if (Array.isArray(resolved.anyOf)) return resolved.anyOf.flatMap(flat)
      const referenced = resolve(resolved)
      return referenced.type === "null" ? [] : [{ ...referenced, ...resolved, type: referenced.type }]
    }
    const property = object(body.properties)[name]
    return property === undefined ? [] : flat(property)
  }
  return { required: body.required, alternatives }
}

const typeOf = (alternatives: ReadonlyArray<Json>) => alternatives.map((schema) => schema.type)

/**
 * Compiled, never run: a client derived from the API takes each payload with its real types, so a
 * wrong type does not compile (`tsc --noEmit` checks this file).
 */
export const derivedClientTypes = Effect.gen(function* () {
  const client = yield* HttpApiClient.make(Api)
  const path = { domain_id: 1 }
  yield* client.links.create({ path, payload: { url: "https://example.com/", redirect_type: 307, rand_alias_length: 8, tags: [{ name: "a" }] } })
  // @ts-expect-error url is a string
  yield* client.links.create({ path, payload: { url: 42 } })
  // @ts-expect-error redirect_type is 301 or 307
  yield* client.links.create({ path, payload: { url: "https://example.com/", redirect_type: "banana" } })
  // @ts-expect-error url is required
  yield* client.links.create({ path, payload: { alias: "a" } })
  // @ts-expect-error tags are objects with a name
  yield* client.links.create({ path, payload: { url: "https://example.com/", tags: ["a"] } })
  const link = { domain_id: 1, link_id: 1 }
  yield* client.links.update({ path: link, payload: [{ path: "/alias", value: "spring" }, { op: "replace", path: "/delete_on", value: null }] })
  // @ts-expect-error an alias is a string
  yield* client.links.update({ path: link, payload: [{ path: "/alias", value: 5 }] })
  // @ts-expect-error no such path
  yield* client.links.update({ path: link, payload: [{ path: "/status", value: "active" }] })
  // @ts-expect-error the password is text
  yield* client.auth.validateLogin({ payload: { email: "a@example.com", password: 1234 } })
  // @ts-expect-error the password is required
  yield* client.auth.validateLogin({ payload: { email: "a@example.com" } })
  yield* client.auth.accessToken({ payload: { email: "a@example.com", refresh_token: "token" } })
  const split = [
    { url: "https://example.com/a", weight: 50 },
    { url: "https://example.com/b", weight: 50 }
  ]
  yield* client.smartLinks.putSettings({
    path: link,
    payload: { rules: [{ when: { device: ["mobile"], query: { ref: true } }, split }], max_clicks: 10, password: "long enough" }
  })
  yield* client.smartLinks.putSettings({ path: link, payload: {} })
  // @ts-expect-error a weight is an integer
  yield* client.smartLinks.putSettings({ path: link, payload: { split: [{ url: "https://example.com/", weight: "50" }] } })
  // @ts-expect-error no such device
  yield* client.smartLinks.putSettings({ path: link, payload: { rules: [{ when: { device: ["phone"] }, url: "https://example.com/" }] } })
  // @ts-expect-error a rule has its conditions
  yield* client.smartLinks.putSettings({ path: link, payload: { rules: [{ url: "https://example.com/" }] } })
  // @ts-expect-error the password is text
  yield* client.smartLinks.putSettings({ path: link, payload: { password: 12345678 } })
  // @ts-expect-error max_clicks is an integer
  yield* client.smartLinks.putSettings({ path: link, payload: { max_clicks: "10" } })
  // @ts-expect-error the settings are an object
  yield* client.smartLinks.putSettings({ path: link, payload: "rules" })
})

const codes = (reply: Reply) => (at(reply.body, "errors") as ReadonlyArray<unknown>).map((error) => numberAt(error, "code"))

describe("request payloads carry their real types", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("the served documents (v4 and v3) give E4's and the logins' field types, enums, ranges and required fields", () =>
      Effect.gen(function* () {
        for (const prefix of ["/api/v4", "/api/v3"] as const) {
          const document = (yield* call("GET", `${prefix}/openapi.json`)).body
          const create = requestBody(document, `${prefix}/{domain_id}/links`)
          expect(create.required, prefix).toEqual(["url"])
          expect(typeOf(create.alternatives("url")), prefix).toEqual(["string"])
          expect(create.alternatives("redirect_type").flatMap((schema) => schema.enum as ReadonlyArray<unknown>)).toEqual([301, 307, "301", "307"])
          expect(typeOf(create.alternatives("alias"))).toEqual(["string"])
          expect(typeOf(create.alternatives("notes"))).toEqual(["string"])
          const tags = create.alternatives("tags")
          expect(typeOf(tags)).toEqual(["array"])
          expect(object(object(tags[0]?.items).properties).name).toEqual({ type: "string" })
          expect(object(tags[0]?.items).required).toEqual(["name"])
          expect(tags[0]?.maxItems).toBe(20)
          const dates = create.alternatives("delete_on")
          expect(typeOf(dates)).toEqual(["integer", "string"])
          expect(dates[0]).toMatchObject({ minimum: 0 })
          if (prefix === "/api/v4") {
            const length = create.alternatives("rand_alias_length")
            expect(typeOf(length)).toEqual(["integer", "string"])
            expect(length[0]).toMatchObject({ minimum: 4, maximum: 40 })
            expect(create.alternatives("notify_on_click").flatMap((schema) => schema.enum ?? [schema.type])).toEqual(["boolean", 0, 1, "0", "1"])
          } else {
            expect(create.alternatives("rand_alias_length")).toEqual([])
          }
          const update = object(
            object(object(object(object(object(object(document).paths)[`${prefix}/{domain_id}/links/{link_id}`]).patch).requestBody).content)[
              "application/json"
            ]
          ).schema
          const operations = object(object(update).items).anyOf as ReadonlyArray<Json>
          const byPath = new Map(operations.map((operation) => [String(object(object(operation.properties).path).enum), operation]))
          expect([...byPath.keys()]).toEqual(
            prefix === "/api/v4" ? ["/alias", "/notes", "/notify_on_click", "/url", "/delete_on", "/archive_on"] : ["/alias", "/notes", "/url", "/delete_on", "/archive_on"]
          )
          expect(object(object(byPath.get("/alias")?.properties).value)).toEqual({ type: "string" })
          const dateValues = object(object(byPath.get("/delete_on")?.properties).value).anyOf as ReadonlyArray<Json>
          expect(dateValues.some((schema) => schema.pattern === "^-?[0-9]{1,5}d$"), prefix).toBe(prefix === "/api/v3")
          const validate = requestBody(document, `${prefix}/links/validate`)
          expect([validate.required, typeOf(validate.alternatives("url"))]).toEqual([["url"], ["string"]])
          const login = requestBody(document, `${prefix}/validate_login`)
          expect([login.required, typeOf(login.alternatives("email")), typeOf(login.alternatives("password"))]).toEqual([
            ["email", "password"],
            ["string"],
            ["string"]
          ])
          const token = requestBody(document, `${prefix}/access_token`)
          expect([token.required, typeOf(token.alternatives("refresh_token"))]).toEqual([["email"], ["string"]])
        }
      })
    )

    it.effect("a client derived from the API creates a link and PUTs its settings; type errors and rule errors of one request are all reported", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* call("POST", "/api/v4/domains", { token: user.token, body: { domain: `types${Date.now()}.example` } })
        const domainId = numberAt(domain.body, "objects", 0, "id")
        const client = yield* HttpApiClient.make(Api, {
          baseUrl: yield* BaseUrl,
          transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(user.token))
        })
        const created = yield* client.links.create({
          path: { domain_id: domainId },
          payload: { url: "https://example.com/typed", redirect_type: 307, rand_alias_length: 9, override_404_check: true, tags: [{ name: "typed" }] }
        })
        expect(created.new_link).toBe(1)
        expect(created.objects[0]).toMatchObject({ redirect_type: 307, tags: [{ name: "typed", shared: false }] })
        expect(created.objects[0]?.alias).toHaveLength(9)

        const now = Math.floor(Date.now() / 1000)
        const mixed = yield* call("POST", `/api/v4/${domainId}/links`, {
          token: user.token,
          body: { url: 42, alias: "bad alias!", notes: 5, redirect_type: "banana", delete_on: now - 5, utm_template_id: true, tags: "x" }
        })
        expect([mixed.status, codes(mixed)]).toEqual([400, [10100, 10102, 10105, 10107, 10108, 10112, 10115]])
        const missing = yield* call("POST", `/api/v4/${domainId}/links`, { token: user.token, body: { alias: "ok", redirect_type: 302 } })
        expect(codes(missing)).toEqual([10100, 10115])

        const link = { domain_id: domainId, link_id: created.objects[0]?.id ?? 0 }
        const settings = yield* client.smartLinks.putSettings({
          path: link,
          payload: {
            rules: [{ when: { country: ["de"] }, split: [{ url: "example.com/a", weight: 30 }, { url: "https://example.com/b", weight: 70 }] }],
            password: "long enough"
          }
        })
        expect(settings.objects[0]).toEqual({
          rules: [{ when: { country: ["DE"] }, split: [{ url: "http://example.com/a", weight: 30 }, { url: "https://example.com/b", weight: 70 }] }],
          password_set: true
        })
        // Well typed, refused by the rules: the derived client decodes the answer into its class.
        const refused = yield* Effect.flip(client.smartLinks.putSettings({ path: link, payload: { split: [{ url: "https://example.com/", weight: 100 }], max_clicks: 0 } }))
        expect(refused).toMatchObject({ _tag: "InvalidInput", problems: [{ code: 10714 }, { code: 10716 }] })
        // Type errors and rule errors of one body, each with its place.
        const badSettings = yield* call("PUT", `/api/v4/${domainId}/links/${link.link_id}/settings`, {
          token: user.token,
          body: { rules: [{ when: { device: ["phone"] }, split: [{ url: "https://example.com/", weight: "50" }, { url: 5, weight: 50 }] }], password: 12345678 }
        })
        expect([badSettings.status, codes(badSettings)]).toEqual([400, [10704, 10714, 10713, 10715]])
        expect((at(badSettings.body, "errors") as ReadonlyArray<unknown>).map((error) => String(at(error, "message")).split(":")[0])).toEqual([
          "rules[0].when.device[0]",
          "rules[0].split[0].weight",
          "rules[0].split[1].url",
          "password"
        ])
        // The link's own settings are still the first ones.
        expect((yield* client.smartLinks.getSettings({ path: link })).objects[0]?.password_set).toBe(true)
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )
  })
})
