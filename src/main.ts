import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import type { ConfigError } from "effect"
import { BootstrapLive, coreLayer, httpLayer, loggerLayer } from "./App.ts"
import { AppConfig } from "./Config.ts"
import { DatabaseLive } from "./Sql/Database.ts"

/** Built last, so that its finalizer, the first to run, says why the process is going away. */
const ShutdownNotice = Layer.scopedDiscard(
  Effect.addFinalizer(() => Effect.logInfo("shutting down: refusing new connections, finishing in-flight requests"))
)

/**
 * On SIGTERM/SIGINT `runMain` interrupts this program and the layers close in reverse order: the
 * listener first (it stops accepting and drains in-flight requests, see `Http/NodeServer.ts`), then
 * the services, then the database pool. The process then exits with code 0.
 */
const MainLive = ShutdownNotice.pipe(
  Layer.provideMerge(httpLayer()),
  Layer.provide(BootstrapLive),
  Layer.provideMerge(coreLayer(DatabaseLive)),
  Layer.provide(loggerLayer),
  Layer.provideMerge(AppConfig.layer)
)

const problems = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...problems(error.left), ...problems(error.right)]
    default:
      return [`${error.path.length === 0 ? "(unnamed variable)" : error.path.join(".")}: ${error.message}`]
  }
}

Layer.launch(MainLive).pipe(
  Effect.catchTag("ConfigError", (error) =>
    Effect.sync(() => {
      process.stderr.write(`configuration error: ${problems(error).join("; ")}\n`)
      process.exit(2)
    })
  ),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
