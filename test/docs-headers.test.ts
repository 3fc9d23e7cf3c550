/**
 * The docs pages run 3.4 MB of third-party script (issue #43, finding 9): they are sent with a
 * Content-Security-Policy that lets only their own inline scripts run, no MIME sniffing and no framing.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { call } from "./support/Http.ts"
import { TestServer } from "./support/TestServer.ts"

/** The policy's directives by name. */
const directives = (policy: string) =>
  new Map(
    policy.split(";").map((part) => {
      const [name = "", ...values] = part.trim().split(/\s+/)
      return [name, values] as const
    })
  )

/** The text of each script element the browser runs (no `type`), and each data block's `type`. */
const scriptsOf = (html: string) => {
  const run: Array<string> = []
  const data: Array<string> = []
  for (const match of html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
    const type = /type="([^"]*)"/.exec(match[1] ?? "")?.[1]
    if (type === undefined) run.push(match[2] ?? "")
    else data.push(type)
  }
  return { run, data }
}

describe("the docs pages", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("send a CSP naming their inline scripts by hash, nosniff, and refuse framing", () =>
      Effect.gen(function* () {
        for (const path of ["/api/docs", "/api/v3/docs"]) {
          const reply = yield* call("GET", path)
          expect(reply.status, path).toBe(200)
          expect(reply.headers.get("x-content-type-options"), path).toBe("nosniff")
          expect(reply.headers.get("x-frame-options"), path).toBe("DENY")
          const policy = directives(reply.headers.get("content-security-policy") ?? "")
          expect(policy.get("default-src"), path).toEqual(["'none'"])
          expect(policy.get("frame-ancestors"), path).toEqual(["'none'"])
          expect(policy.get("base-uri"), path).toEqual(["'none'"])
          expect(policy.get("connect-src"), path).toEqual(["'self'"])
          const { run, data } = scriptsOf(reply.text)
          expect(data, path).toEqual(["application/json"])
          expect(run, path).toHaveLength(2)
          // Exactly the page's own scripts may run: no 'unsafe-inline' or 'unsafe-eval', no host.
          const hashes = run.map((text) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`)
          expect(policy.get("script-src"), path).toEqual([...hashes, "'wasm-unsafe-eval'"])
        }
      })
    )
  })
})
