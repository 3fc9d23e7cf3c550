import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createHmac } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { replaceTokenSecret, TokenSecret } from "../src/Auth/TokenStore.ts"
import { AppConfig } from "../src/Config.ts"

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const secretIn = (values: Record<string, string>) =>
  TokenSecret.pipe(Effect.provide(TokenSecret.Default.pipe(Layer.provide(AppConfig.layerFromMap(values)))))

const visitorKey = (dataKey: Buffer) => createHmac("sha256", dataKey).update("click ip hash").digest("hex")

describe("the data key: what visitor hashes are keyed with outlives a token-secret rotation", () => {
  it.effect("an installation that had only a token secret keeps its visitor hashes; a rotation changes tokens, not them", () =>
    Effect.gen(function* () {
      const dataDir = mkdtempSync(join(tmpdir(), "links-data-key-"))
      dirs.push(dataDir)
      writeFileSync(join(dataDir, "token-secret"), "the secret of an older installation\n", { mode: 0o600 })
      const before = yield* secretIn({ DATA_DIR: dataDir })
      expect(visitorKey(before.dataKey)).toBe(visitorKey(Buffer.from("the secret of an older installation")))
      expect(statSync(join(dataDir, "data-key")).mode & 0o777).toBe(0o600)
      const tokensBefore = before.current()

      replaceTokenSecret(dataDir)
      replaceTokenSecret(dataDir)
      const after = yield* secretIn({ DATA_DIR: dataDir })
      expect(after.current().equals(tokensBefore)).toBe(false)
      expect(visitorKey(after.dataKey)).toBe(visitorKey(before.dataKey))
    })
  )

  it.effect("a rotation before the service ever started with a data key keeps the old secret's hashes too", () =>
    Effect.gen(function* () {
      const dataDir = mkdtempSync(join(tmpdir(), "links-data-key-"))
      dirs.push(dataDir)
      writeFileSync(join(dataDir, "token-secret"), "secret before the upgrade", { mode: 0o600 })
      replaceTokenSecret(dataDir)
      expect(readFileSync(join(dataDir, "data-key"), "utf8")).toBe("secret before the upgrade")
      const after = yield* secretIn({ DATA_DIR: dataDir })
      expect(visitorKey(after.dataKey)).toBe(visitorKey(Buffer.from("secret before the upgrade")))
    })
  )

  it.effect("a new installation gets a token secret and a data key; TOKEN_SECRET is both and writes no file", () =>
    Effect.gen(function* () {
      const fresh = mkdtempSync(join(tmpdir(), "links-data-key-"))
      dirs.push(fresh)
      const made = yield* secretIn({ DATA_DIR: fresh })
      expect(made.dataKey.toString("utf8")).toBe(readFileSync(join(fresh, "token-secret"), "utf8"))
      const operator = mkdtempSync(join(tmpdir(), "links-data-key-"))
      dirs.push(operator)
      const fromEnvironment = yield* secretIn({ DATA_DIR: operator, TOKEN_SECRET: "set by the operator" })
      expect(fromEnvironment.dataKey.toString("utf8")).toBe("set by the operator")
      expect(existsSync(join(operator, "data-key"))).toBe(false)
    })
  )
})
