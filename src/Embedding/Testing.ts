import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Sessions } from "../Auth/Sessions.ts"
import { AppConfig } from "../Config.ts"
import { clickLogDefaults, type ClickLogOptions } from "../Clicks/ClickLog.ts"
import { embeddedClientLayer } from "../Sql/Database.ts"
import { Callers } from "./Callers.ts"
import { servicesLayerOver } from "./Layers.ts"

/**
 * `AppConfig` for tests: a temporary `DATA_DIR` (removed with the layer), a fixed `TOKEN_SECRET`,
 * rate limits lifted; `values` (environment variable names, as strings) take precedence.
 */
export const testConfigLayer = (values: Record<string, string> = {}) =>
  Layer.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "links-embedded-test-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      ),
      (dataDir) =>
        AppConfig.layerFromMap({
          DATA_DIR: dataDir,
          TOKEN_SECRET: "test token secret",
          RATE_LIMIT_PER_SECOND: "1000000",
          RATE_LIMIT_PER_TOKEN_PER_SECOND: "1000000",
          ...values
        })
    )
  )

/**
 * Every service of `servicesLayer` over PGlite in memory (on a thread of its own, migrated at
 * start), for an embedder's own tests: nothing to install or run. Time is Effect's `Clock`, so under
 * `@effect/vitest`'s `TestClock` tokens expire and the scheduler sweeps when the test moves it.
 */
export const testServicesLayer = (values: Record<string, string> = {}, clicks: ClickLogOptions = clickLogDefaults) =>
  servicesLayerOver(embeddedClientLayer("memory://"), clicks).pipe(Layer.provide(testConfigLayer(values)))

/** The caller an e-mail and password sign in as, through an access token (E2). */
export const callerOf = (email: string, password: string) =>
  Effect.gen(function* () {
    const session = yield* (yield* Sessions).accessToken({ email, password })
    return yield* (yield* Callers).ofAccessToken(session.accessToken)
  })
