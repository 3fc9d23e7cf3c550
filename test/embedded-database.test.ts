import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { DataDirRefused, privateDataDir } from "../src/Platform/DataDir.ts"
import { embeddedClientLayer } from "../src/Sql/Database.ts"
import { threadNiceValues } from "./support/Threads.ts"

/** Every path under `dir` (itself included) whose mode lets its group or others in, with that mode. */
const openToOthers = (dir: string): ReadonlyArray<string> => {
  const here = (statSync(dir).mode & 0o077) === 0 ? [] : [`${dir} ${(statSync(dir).mode & 0o777).toString(8)}`]
  return [
    ...here,
    ...readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return openToOthers(path)
      const mode = statSync(path).mode & 0o777
      return (mode & 0o077) === 0 ? [] : [`${path} ${mode.toString(8)}`]
    })
  ]
}

describe("the embedded database", () => {
  it.scopedLive(
    "runs on a thread of its own: a long statement leaves the main thread's event loop free",
    () =>
      Effect.gen(function* () {
        const nicedBefore = threadNiceValues().filter((nice) => nice === 10).length
        const context = yield* Layer.build(embeddedClientLayer("memory://"))
        const sql = Context.get(context, SqlClient.SqlClient)
        // Its thread yields to the event loop under load: nice 10 (on Linux a thread's own).
        expect(threadNiceValues().filter((nice) => nice === 10).length).toBe(nicedBefore + 1)
        const delay = monitorEventLoopDelay({ resolution: 10 })
        delay.enable()
        const started = performance.now()
        const [row] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM generate_series(1, 4000000)`
        const took = performance.now() - started
        delay.disable()
        expect(row?.n).toBe(4_000_000)
        // The statement is long enough that, run on this thread, it would stall the loop for all of it
        // (1.5 million rows took 298 ms on a quick day: 4 million keep it well over 300).
        expect(took).toBeGreaterThan(300)
        expect(delay.max / 1e6, `longest stall ${(delay.max / 1e6).toFixed(0)} ms during a ${took.toFixed(0)} ms statement`).toBeLessThan(
          Math.min(150, took / 3)
        )
      }),
    60_000
  )

  it.scopedLive(
    "keeps DATA_DIR private: the folder 0700, every file and folder in it to this user only",
    () =>
      Effect.gen(function* () {
        const dataDir = join(mkdtempSync(join(tmpdir(), "links-private-")), "data")
        const context = yield* Layer.build(embeddedClientLayer(dataDir))
        const sql = Context.get(context, SqlClient.SqlClient)
        yield* sql`CREATE TABLE private_check (n int)`
        yield* sql`INSERT INTO private_check SELECT generate_series(1, 20000)`
        // PGlite alone leaves about 970 of its files writable by anyone.
        expect(readdirSync(join(dataDir, "pg")).length).toBeGreaterThan(5)
        expect(openToOthers(dataDir)).toEqual([])
      }),
    60_000
  )

  it.effect("tightens a DATA_DIR open to others, with everything in it; refuses one that is no folder", () =>
    Effect.gen(function* () {
      const dataDir = mkdtempSync(join(tmpdir(), "links-loose-"))
      mkdirSync(join(dataDir, "clicks"))
      writeFileSync(join(dataDir, "token-secret"), "secret")
      writeFileSync(join(dataDir, "clicks", "spill.ndjson"), "{}")
      for (const path of [dataDir, join(dataDir, "clicks")]) chmodSync(path, 0o777)
      for (const path of [join(dataDir, "token-secret"), join(dataDir, "clicks", "spill.ndjson")]) chmodSync(path, 0o666)
      expect(openToOthers(dataDir)).toHaveLength(4)
      yield* privateDataDir(dataDir)
      expect(openToOthers(dataDir)).toEqual([])
      expect(statSync(join(dataDir, "token-secret")).mode & 0o777).toBe(0o600)

      const notAFolder = join(dataDir, "token-secret")
      const refused = yield* Effect.flip(privateDataDir(notAFolder))
      expect(refused).toBeInstanceOf(DataDirRefused)
      expect(refused.message).toContain(`DATA_DIR ${notAFolder} cannot be kept private`)
    })
  )
})
