import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { embeddedClient } from "../src/Sql/Database.ts"

describe("the embedded database", () => {
  it.scopedLive(
    "runs on a thread of its own: a long statement leaves the main thread's event loop free",
    () =>
      Effect.gen(function* () {
        const context = yield* Layer.build(embeddedClient("memory://"))
        const sql = Context.get(context, SqlClient.SqlClient)
        const delay = monitorEventLoopDelay({ resolution: 10 })
        delay.enable()
        const started = performance.now()
        const [row] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM generate_series(1, 1500000)`
        const took = performance.now() - started
        delay.disable()
        expect(row?.n).toBe(1_500_000)
        // The statement is long enough that, run on this thread, it would stall the loop for all of it.
        expect(took).toBeGreaterThan(300)
        expect(delay.max / 1e6, `longest stall ${(delay.max / 1e6).toFixed(0)} ms during a ${took.toFixed(0)} ms statement`).toBeLessThan(
          Math.min(150, took / 3)
        )
      }),
    60_000
  )
})
