/**
 * User agents and referrers sent as UTF-8 are stored as the text they are (issue #43, finding 9):
 * Node hands a header over a character per byte (Latin-1), so `＝` was once stored as "ï¼\x9d".
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { connect } from "node:net"
import { ClickLog } from "../src/Clicks/ClickLog.ts"
import { MAX_USER_AGENT } from "../src/Clicks/ClickSource.ts"
import { csvRecords } from "../src/Import/Csv.ts"
import { newLink } from "./support/Fixtures.ts"
import { call, newUser } from "./support/Http.ts"
import { rawStatus } from "./support/RawClient.ts"
import { newShortDomain } from "./support/Redirects.ts"
import { BaseUrl, TestServer } from "./support/TestServer.ts"

/**
 * A GET of `path` on the short domain `host` with headers given as bytes, over a socket of its own
 * (Node's client will not send UTF-8 bytes above U+00FF, nor bytes that are not UTF-8); the answer.
 */
const visitWith = (host: string, path: string, headers: ReadonlyArray<readonly [string, Buffer]>) =>
  Effect.flatMap(BaseUrl, (base) =>
    Effect.async<string>((resume) => {
      const { hostname, port } = new URL(base)
      const socket = connect(Number(port), hostname)
      let received = ""
      socket.setEncoding("latin1")
      socket.on("data", (chunk: string) => (received += chunk))
      socket.once("close", () => resume(Effect.succeed(received)))
      const lines = headers.flatMap(([name, value]) => [Buffer.from(`${name}: `), value, Buffer.from("\r\n")])
      socket.write(Buffer.concat([Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n`), ...lines, Buffer.from("\r\n")]))
      return Effect.sync(() => socket.destroy())
    })
  )

const utf8 = (text: string) => Buffer.from(text, "utf8")

/** The rows of a CSV answer as objects by column. */
const rowsOf = async (text: string) => {
  async function* once() {
    yield text
  }
  const records: Array<ReadonlyArray<string>> = []
  for await (const record of csvRecords(once())) records.push(record.fields)
  const [header = [], ...rows] = records
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] ?? ""])))
}

describe("click headers", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("a UTF-8 user agent and referrer come back as sent in the clicks export; Latin-1 stays Latin-1; a character the length cut halves is dropped", () =>
      Effect.gen(function* () {
        const user = yield* newUser()
        const domain = yield* newShortDomain(user)
        const from = Math.floor(Date.now() / 1000) - 60
        const sent: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, Buffer]>, string]> = [
          // [alias, the headers' bytes, the user agent stored]
          [
            "utf",
            [["User-Agent", utf8("Mozilla/5.0 (X11; Linux x86_64) Prüfung＝Agent/1.0")], ["Referer", utf8("https://bücher.example/ｑ＝１")]],
            "Mozilla/5.0 (X11; Linux x86_64) Prüfung＝Agent/1.0"
          ],
          ["latin", [["User-Agent", Buffer.from("Agent \u00e9t\u00e9", "latin1")]], "Agent \u00e9t\u00e9"],
          ["cut", [["User-Agent", utf8(`${"a".repeat(MAX_USER_AGENT - 1)}＝`)]], "a".repeat(MAX_USER_AGENT - 1)]
        ]
        for (const [alias, headers] of sent) {
          yield* newLink(user, domain.id, { alias, url: "https://example.com/" })
          expect(rawStatus(yield* visitWith(domain.name, `/${alias}`, headers)), alias).toBe(301)
        }
        yield* (yield* ClickLog).flush
        const reply = yield* call("GET", `/api/v4/${domain.id}/export/clicks.csv?from_unix=${from}&to_unix=${from + 600}`, { token: user.token })
        expect(reply.status, reply.text).toBe(200)
        const rows = new Map((yield* Effect.promise(() => rowsOf(reply.text))).map((row) => [row["alias"], row]))
        for (const [alias, , stored] of sent) expect(rows.get(alias)?.["user_agent"], alias).toBe(stored)
        // Referrers are kept as their host, an IDN as punycode: "bücher.example", not the punycode of "bã¼cher.example".
        expect(rows.get("utf")?.["referrer"]).toBe("xn--bcher-kva.example")
      })
    )
  })
})
