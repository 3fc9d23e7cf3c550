import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { at, call, codes, newUser, type Reply, type TestUser } from "./support/Http.ts"
import { newLink, newUtmTemplate } from "./support/Fixtures.ts"
import { newShortDomain } from "./support/Redirects.ts"
import { TestServer } from "./support/TestServer.ts"

const path = (domainId: number, linkId: number, version = 4) => `/api/v${version}/${domainId}/links/${linkId}/settings`

const put = (user: TestUser, domainId: number, linkId: number, body: unknown, version = 4) =>
  call("PUT", path(domainId, linkId, version), { token: user.token, body })

const messages = (reply: Reply) => {
  const errors = at(reply.body, "errors")
  return Array.isArray(errors) ? errors.map((error) => String(at(error, "message"))) : []
}

const now = () => Math.floor(Date.now() / 1000)

const FULL = {
  rules: [
    { when: { device: ["mobile"], os: ["ios"] }, url: "https://example.com/ios" },
    { when: { language: ["fr"], country: ["fr", "BE"] }, split: [{ url: "example.com/a", weight: 30 }, { url: "https://example.com/b", weight: 70 }] },
    { when: { cidr: ["10.0.0.0/8", "2001:db8::/32"], query: { ref: "mail", beta: true }, after: 1, before: 4_000_000_000 }, url: "https://example.com/c" },
    { when: { browser: ["firefox"], region: ["Bavaria"], city: ["Munich"] }, url: "https://example.com/d" }
  ],
  split: [
    { url: "https://example.com/x", weight: 50 },
    { url: "https://example.com/y", weight: 50 }
  ],
  password: "open sesame",
  max_clicks: 100,
  expired_url: "https://example.com/gone",
  og: { title: "A <title>", description: "Described", image: "https://example.com/i.png" }
}

describe("smart-link settings", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("PUT stores every field normalised and answers it; GET answers the same; the password only as password_set", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const linkId = yield* newLink(user, domain.id)
        const empty = yield* call("GET", path(domain.id, linkId), { token: user.token })
        expect(empty.status).toBe(200)
        expect(empty.body).toEqual({ objects: [{ password_set: false }] })

        const expiresAt = now() + 3600
        const stored = yield* put(user, domain.id, linkId, { ...FULL, expires_at: expiresAt })
        expect(stored.status, stored.text).toBe(200)
        const { password: _, ...rest } = FULL
        const expected = {
          ...rest,
          expires_at: expiresAt,
          password_set: true,
          rules: FULL.rules.map((rule, n) =>
            n === 1
              ? { when: { language: ["fr"], country: ["FR", "BE"] }, split: [{ url: "http://example.com/a", weight: 30 }, { url: "https://example.com/b", weight: 70 }] }
              : rule
          )
        }
        expect(stored.body).toEqual({ objects: [expected] })
        expect(stored.text).not.toContain("open sesame")
        const read = yield* call("GET", path(domain.id, linkId), { token: user.token })
        expect(read.body).toEqual({ objects: [expected] })
        expect(read.text).not.toContain("open sesame")

        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ password_hash: string; settings: unknown }>`SELECT password_hash, settings FROM link_settings WHERE link_id = ${linkId}`
        expect(row?.password_hash).toMatch(/^\$argon2id\$/)
        expect(JSON.stringify(row?.settings)).not.toContain("open sesame")

        // Absent fields are cleared; {} clears everything and removes the row.
        const fewer = yield* put(user, domain.id, linkId, { max_clicks: 5 })
        expect(fewer.body).toEqual({ objects: [{ max_clicks: 5, password_set: false }] })
        const cleared = yield* put(user, domain.id, linkId, {})
        expect(cleared.body).toEqual({ objects: [{ password_set: false }] })
        expect(yield* sql`SELECT 1 FROM link_settings WHERE link_id = ${linkId}`).toHaveLength(0)
      })
    )

    it.effect("version 3 serves the same shapes; the link's own answers do not change with settings", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const linkId = yield* newLink(user, domain.id)
        const before4 = yield* call("GET", `/api/v4/${domain.id}/links/${linkId}`, { token: user.token })
        const before3 = yield* call("GET", `/api/v3/${domain.id}/links/${linkId}`, { token: user.token })
        const v3 = yield* put(user, domain.id, linkId, { split: FULL.split, password: "12345678" }, 3)
        expect(v3.status, v3.text).toBe(200)
        expect(v3.body).toEqual({ objects: [{ split: FULL.split, password_set: true }] })
        const read3 = yield* call("GET", path(domain.id, linkId, 3), { token: user.token })
        expect(read3.body).toEqual(v3.body)
        expect((yield* call("GET", `/api/v4/${domain.id}/links/${linkId}`, { token: user.token })).body).toEqual(before4.body)
        expect((yield* call("GET", `/api/v3/${domain.id}/links/${linkId}`, { token: user.token })).body).toEqual(before3.body)
        const bad3 = yield* put(user, domain.id, linkId, { split: [{ url: "https://a.example", weight: 100 }] }, 3)
        expect([bad3.status, codes(bad3)]).toEqual([400, [10714]])
      })
    )

    it.effect("destinations get the link's UTM fields", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const template = yield* newUtmTemplate(user, domain.id, [{ label: "Source", field_code: "utm_source", type: "text", required: true }])
        const linkId = yield* newLink(user, domain.id, { utm_template_id: template, utm_fields: { utm_source: "news" } })
        expect((yield* put(user, domain.id, linkId, { split: FULL.split })).status).toBe(200)
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ targets: ReadonlyArray<{ url: string }> }>`SELECT targets FROM link_settings WHERE link_id = ${linkId}`
        expect(row?.targets.map((target) => target.url)).toEqual(["https://example.com/x?utm_source=news", "https://example.com/y?utm_source=news"])
      })
    )

    it.effect("only those who may read and update the link see and change its settings", () =>
      Effect.gen(function* () {
        const owner = yield* newUser()
        const domain = yield* newShortDomain(owner)
        const linkId = yield* newLink(owner, domain.id)
        const member = yield* newUser({ accountId: owner.accountId, role: "member" })
        const stranger = yield* newUser()
        for (const user of [member, stranger]) {
          expect(codes(yield* call("GET", path(domain.id, linkId), { token: user.token }))).toEqual(user === member ? [10150] : [10101])
          expect(codes(yield* put(user, domain.id, linkId, { max_clicks: 1 }))).toEqual(user === member ? [10150] : [10101])
        }
        expect((yield* call("GET", path(domain.id, linkId))).status).toBe(401)
        expect(codes(yield* call("GET", path(domain.id, 999_999_999), { token: owner.token }))).toEqual([10150])
      })
    )

    it.effect("every malformed field gets its own code and a message naming the rule and field", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const linkId = yield* newLink(user, domain.id)
        const rule = (when: unknown) => ({ rules: [{ when: { device: ["mobile"] }, url: "https://ok.example" }, { when, url: "https://ok.example" }] })
        const cases: ReadonlyArray<readonly [unknown, number, string]> = [
          [[], 10700, "settings"],
          [{ colour: "red" }, 10700, "colour"],
          [{ rules: {} }, 10701, "rules"],
          [{ rules: Array.from({ length: 21 }, () => ({ when: { device: ["mobile"] }, url: "https://ok.example" })) }, 10701, "rules"],
          [{ rules: [{ when: { device: ["mobile"] } }] }, 10702, "rules[0]"],
          [{ rules: [{ when: { device: ["mobile"] }, url: "https://a.example", split: [{ url: "https://b.example", weight: 50 }, { url: "https://c.example", weight: 50 }] }] }, 10702, "rules[0]"],
          [rule({}), 10703, "rules[1].when"],
          [rule({ weather: ["sunny"] }), 10703, "rules[1].when.weather"],
          [rule({ device: ["mobile"], query: Object.fromEntries(Array.from({ length: 10 }, (_, n) => [`p${n}`, true])) }), 10703, "rules[1].when"],
          [rule({ device: ["phone"] }), 10704, "rules[1].when.device[0]"],
          [rule({ device: [] }), 10704, "rules[1].when.device"],
          [rule({ os: ["beos"] }), 10705, "rules[1].when.os[0]"],
          [rule({ browser: ["netscape"] }), 10706, "rules[1].when.browser[0]"],
          [rule({ language: ["en_GB"] }), 10707, "rules[1].when.language[0]"],
          [rule({ country: ["USA"] }), 10708, "rules[1].when.country[0]"],
          [rule({ region: [""] }), 10709, "rules[1].when.region[0]"],
          [rule({ city: [42] }), 10719, "rules[1].when.city[0]"],
          [rule({ cidr: ["10.0.0.0/33"] }), 10710, "rules[1].when.cidr[0]"],
          [rule({ cidr: ["::1", "not-an-ip"] }), 10710, "rules[1].when.cidr[1]"],
          [rule({ query: { ref: 1 } }), 10711, "rules[1].when.query.ref"],
          [rule({ after: "soon" }), 10712, "rules[1].when.after"],
          [rule({ after: 20, before: 10 }), 10712, "rules[1].when.after"],
          [{ rules: [{ when: { device: ["mobile"] }, url: "ftp://files.example" }] }, 10713, "rules[0].url"],
          [{ rules: [{ when: { device: ["mobile"] }, url: "https://user:pw@x.example" }] }, 10713, "rules[0].url"],
          [{ split: [{ url: "https://a.example", weight: 100 }] }, 10714, "split"],
          [{ split: [{ url: "https://a.example", weight: 50 }, { url: "https://b.example", weight: 49 }] }, 10714, "split: the weights sum to 99"],
          [{ split: [{ url: "https://a.example", weight: 50.5 }, { url: "https://b.example", weight: 50 }] }, 10714, "split[0].weight"],
          [{ split: Array.from({ length: 11 }, () => ({ url: "https://a.example", weight: 0 })) }, 10714, "split"],
          [{ split: [{ url: "bad url", weight: 50 }, { url: "https://b.example", weight: 50 }] }, 10713, "split[0].url"],
          [{ rules: [{ when: { os: ["ios"] }, split: [{ url: "https://a.example", weight: 60 }, { url: "https://b.example", weight: 60 }] }] }, 10714, "rules[0].split"],
          [{ password: "short" }, 10715, "password"],
          [{ password: "x".repeat(129) }, 10715, "password"],
          [{ max_clicks: 0 }, 10716, "max_clicks"],
          [{ max_clicks: "10" }, 10716, "max_clicks"],
          [{ expires_at: now() - 10 }, 10717, "expires_at"],
          [{ expired_url: "javascript:alert(1)" }, 10713, "expired_url"],
          [{ og: { title: "t", image: "data:image/png;base64,AAAA" } }, 10718, "og.image"],
          [{ og: { colour: "red" } }, 10718, "og.colour"],
          [{ og: "preview" }, 10718, "og"]
        ]
        for (const [body, code, place] of cases) {
          const reply = yield* put(user, domain.id, linkId, body)
          expect([reply.status, codes(reply)], JSON.stringify(body).slice(0, 200)).toEqual([400, [code]])
          expect(messages(reply)[0]).toContain(place)
        }
        // Several problems at once, each reported.
        const many = yield* put(user, domain.id, linkId, { max_clicks: -1, password: "1", rules: [{ when: { os: ["beos"] }, url: "nope nope" }] })
        expect(codes(many)).toEqual([10705, 10713, 10715, 10716])
        // Every problem of a rule, not only its first, in both versions.
        const malformed = {
          rules: [
            { when: { device: ["phone"], cidr: ["10.0.0.0/33"], after: "soon" }, url: "nope nope", colour: 1 },
            { url: "ftp://files.example" },
            { when: { os: ["ios"] }, split: [{ url: "bad url", weight: 50.5, extra: 1 }, "half"] }
          ]
        }
        const expected = [
          [10702, "rules[0].colour"],
          [10704, "rules[0].when.device[0]"],
          [10710, "rules[0].when.cidr[0]"],
          [10712, "rules[0].when.after"],
          [10713, "rules[0].url"],
          [10702, "rules[1].when is missing"],
          [10713, "rules[1].url"],
          [10714, "rules[2].split[0].extra"],
          [10713, "rules[2].split[0].url"],
          [10714, "rules[2].split[0].weight"],
          [10714, "rules[2].split[1]"]
        ]
        for (const version of [4, 3]) {
          const reply = yield* put(user, domain.id, linkId, malformed, version)
          expect(reply.status).toBe(400)
          expect(codes(reply)).toEqual(expected.map(([code]) => code))
          expect(messages(reply).map((message) => message.split(":")[0])).toEqual(expected.map(([, place]) => place))
        }
        // Nothing was stored by any of them.
        expect((yield* call("GET", path(domain.id, linkId), { token: user.token })).body).toEqual({ objects: [{ password_set: false }] })
        // A body that is not JSON.
        const garbled = yield* call("PUT", path(domain.id, linkId), { token: user.token, rawBody: "{rules:" })
        expect(garbled.status).toBe(400)
      })
    )

    it.effect("query names __proto__, constructor and prototype are refused with 10711 and nothing is stored; what GET answers PUTs back unchanged", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const linkId = yield* newLink(user, domain.id)
        for (const name of ["__proto__", "constructor", "prototype"]) {
          // As a client's JSON has it: an own key, which JSON.stringify writes out.
          const query: unknown = JSON.parse(`{"ref":"mail",${JSON.stringify(name)}:"x"}`)
          const reply = yield* put(user, domain.id, linkId, { rules: [{ when: { query }, url: "https://ok.example" }] })
          expect([reply.status, codes(reply)], name).toEqual([400, [10711]])
          expect(messages(reply)[0]).toBe(`rules[0].when.query.${name} is a reserved name: query is {name: value}, each value a string or true`)
        }
        expect((yield* call("GET", path(domain.id, linkId), { token: user.token })).body).toEqual({ objects: [{ password_set: false }] })

        const { password: _, ...settings } = FULL
        const withNames = { ...settings, rules: [{ when: { query: { toString: "1", hasOwnProperty: true, ref: "mail" } }, url: "https://example.com/q" }, ...FULL.rules] }
        expect((yield* put(user, domain.id, linkId, withNames)).status).toBe(200)
        const read = yield* call("GET", path(domain.id, linkId), { token: user.token })
        const { password_set: __, ...document } = at(read.body, "objects", 0) as Record<string, unknown>
        expect(document.rules).toEqual(withNames.rules.map((rule, n) => (n === 2 ? { ...rule, when: { language: ["fr"], country: ["FR", "BE"] }, split: [{ url: "http://example.com/a", weight: 30 }, { url: "https://example.com/b", weight: 70 }] } : rule)))
        const again = yield* put(user, domain.id, linkId, document)
        expect(again.status, again.text).toBe(200)
        expect(again.body).toEqual(read.body)
        expect((yield* call("GET", path(domain.id, linkId), { token: user.token })).body).toEqual(read.body)
      })
    )

    it.effect("E31 lists the smart-link codes; the OpenAPI document has the tag and each operation's codes", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const catalogue = yield* call("GET", "/api/v4/error_codes", { token: user.token })
        const listed = JSON.stringify(catalogue.body)
        for (const code of [10700, 10710, 10714, 10719]) expect(listed).toContain(String(code))
        const document = yield* call("GET", "/api/v4/openapi.json")
        const operation = at(document.body, "paths", "/api/v4/{domain_id}/links/{link_id}/settings", "put")
        expect(at(operation, "tags")).toEqual(["Smart links (extension)"])
        expect(JSON.stringify(at(operation, "responses", "400"))).toContain("10714")
        expect(at(document.body, "paths", "/api/v4/{domain_id}/links/{link_id}/clicks/destinations", "get")).toBeDefined()
        const v3 = yield* call("GET", "/api/v3/openapi.json")
        expect(at(v3.body, "paths", "/api/v3/{domain_id}/links/{link_id}/settings", "get")).toBeDefined()
      })
    )
  })
})
