/**
 * Credentials never reach the logs (issue #43, finding 8): parameters named like one by pattern, not
 * by a list of exact names, and tokens sent in a path segment, on the API's and a short domain's lines.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, LogLevel } from "effect"
import { redactedTarget } from "../src/Platform/RequestUrl.ts"
import { newLink } from "./support/Fixtures.ts"
import { call, newUser, within } from "./support/Http.ts"
import { captureLogs } from "./support/LogCapture.ts"
import { newShortDomain, visit } from "./support/Redirects.ts"
import { TestServer } from "./support/TestServer.ts"

/** An access token's shape: 32 random bytes in base64url. */
const TOKEN = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWpr"

describe("redactedTarget", () => {
  it("redacts every parameter whose name holds password, secret, token or key, in any case or spelling", () => {
    const forms: ReadonlyArray<readonly [string, string]> = [
      ["password[]=s", "password[]=REDACTED"],
      ["password%5B%5D=s", "password%5B%5D=REDACTED"],
      ["secret=s", "secret=REDACTED"],
      ["api_key=s", "api_key=REDACTED"],
      ["client_secret=s", "client_secret=REDACTED"],
      ["X-Api-Key=s", "X-Api-Key=REDACTED"],
      ["apiKey=s", "apiKey=REDACTED"],
      ["id_token=s", "id_token=REDACTED"],
      ["user[password]=s", "user[password]=REDACTED"],
      ["pass%77ord=s", "pass%77ord=REDACTED"],
      ["new+password=s", "new+password=REDACTED"],
      ["ACCESS_TOKEN=s", "ACCESS_TOKEN=REDACTED"],
      ["x-amz-signature=s", "x-amz-signature=REDACTED"],
      ["authorization=s", "authorization=REDACTED"]
    ]
    for (const [sent, logged] of forms) {
      expect(redactedTarget(`/api/v4/error_codes?page=2&${sent}&keep=1`), sent).toBe(`/api/v4/error_codes?page=2&${logged}&keep=1`)
    }
    expect(redactedTarget("/a?x=1;token=s;y=2")).toBe("/a?x=1;token=REDACTED;y=2")
    expect(redactedTarget("/a?page=2&domain_id=7&token")).toBe("/a?page=2&domain_id=7&token")
  })

  it("redacts a path segment longer than any alias, such as a token, and keeps the routes' own segments and 40-character aliases", () => {
    expect(redactedTarget(`/api/v4/access_token/${TOKEN}`)).toBe("/api/v4/access_token/REDACTED")
    expect(redactedTarget(`/${TOKEN}?qr=1`)).toBe("/REDACTED?qr=1")
    expect(redactedTarget(`/api/v4/12/links/345/clicks/hourly?from=1`)).toBe("/api/v4/12/links/345/clicks/hourly?from=1")
    const alias = "a".repeat(40)
    expect(redactedTarget(`/${alias}`)).toBe(`/${alias}`)
    // An absolute URL (a redirect's Location) is a link's own target: its query is redacted, not its path.
    expect(redactedTarget(`https://example.com/${"p".repeat(50)}?utm_source=x&api_key=s`)).toBe(`https://example.com/${"p".repeat(50)}?utm_source=x&api_key=REDACTED`)
  })
})

describe("logged requests", () => {
  const logs = captureLogs()
  layer(TestServer({ LOG_LEVEL: "debug" }, LogLevel.Debug).pipe(Layer.provide(logs.layer)), { excludeTestServices: true })((it) => {
    it.effect("carry no credential sent in a query or a path, on the API's access lines and a short domain's redirect lines", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const secrets = "password[]=SECRET1&secret=SECRET2&api_key=SECRET3&client_secret=SECRET4&page=2"
        yield* call("GET", `/api/v4/error_codes?${secrets}`, { token: user.token })
        const unknown = yield* call("GET", `/api/v4/access_token/${user.token}`)
        expect(unknown.status).toBe(404)
        const domain = yield* newShortDomain(user)
        yield* newLink(user, domain.id, { alias: "go", url: "https://example.com/target" })
        const redirect = yield* visit(domain.name, "/go?utm_source=mail&api_key=SECRET5")
        expect([301, 302, 307, 308]).toContain(redirect.status)
        expect((yield* visit(domain.name, `/${user.token}`)).status).toBe(404)
        const redirectLines = () => logs.lines.filter((line) => line.startsWith("Sent redirect") && line.includes(domain.name))
        expect(yield* within(10_000, Effect.sync(() => redirectLines().length === 2))).toBeLessThan(Number.POSITIVE_INFINITY)

        expect(logs.lines.find((line) => line.includes("page=2"))).toContain(
          "/api/v4/error_codes?password[]=REDACTED&secret=REDACTED&api_key=REDACTED&client_secret=REDACTED&page=2"
        )
        expect(logs.lines.find((line) => line.includes("/api/v4/access_token/"))).toContain('"http.url":"/api/v4/access_token/REDACTED"')
        const [sent, unknownAlias] = redirectLines()
        expect(sent).toContain('"http.url":"/go?utm_source=mail&api_key=REDACTED"')
        expect(unknownAlias).toContain('"http.url":"/REDACTED"')
        expect(logs.lines.filter((line) => /SECRET/.test(line))).toEqual([])
        expect(logs.lines.filter((line) => line.includes(user.token))).toEqual([])
      })
    )
  })
})
