/**
 * The whole HTTP server of the service, run by another program over its own PgClient (DATABASE_URL),
 * on a port of its own (PORT, HOST, ADMIN_EMAIL, ADMIN_PASSWORD and the other variables of the
 * service's README). It prints the address it listens on and serves until SIGINT or SIGTERM.
 */
// First: V8's allocation-site pretenuring off for the process, before node:http allocates.
import "link-shortener/heap-flags"
import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer } from "effect"
import { AppConfig, serverLayer } from "link-shortener"

const Database = PgClient.layerConfig({ url: Config.redacted("DATABASE_URL") })

const Server = serverLayer().pipe(Layer.provide(Database), Layer.provide(AppConfig.layer))

Effect.gen(function* () {
  const { address } = yield* HttpServer.HttpServer
  if (address._tag === "TcpAddress") process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`)
  return yield* Effect.never
}).pipe(Effect.provide(Server), NodeRuntime.runMain)
