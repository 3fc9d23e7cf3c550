import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Layer } from "effect"
import { BootstrapLive, coreLayer, httpLayer, loggerLayer } from "./App.ts"
import { AppConfig } from "./Config.ts"
import { DatabaseLive } from "./Sql/Database.ts"

const MainLive = httpLayer().pipe(
  Layer.provide(BootstrapLive),
  Layer.provideMerge(coreLayer(DatabaseLive)),
  Layer.provide(loggerLayer),
  Layer.provideMerge(AppConfig.layer)
)

Layer.launch(MainLive).pipe(
  Effect.catchTag("ConfigError", (error) =>
    Effect.sync(() => {
      process.stderr.write(`configuration error: ${Cause.pretty(Cause.fail(error))}\n`)
      process.exit(2)
    })
  ),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
