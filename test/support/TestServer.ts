import { HttpServer } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Logger, LogLevel } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { coreLayer, httpLayer } from "../../src/App.ts"
import { Shutdown } from "../../src/Platform/Shutdown.ts"
import { AppConfig } from "../../src/Config.ts"
import type { DatabasePool } from "../../src/Sql/Database.ts"
import { makeTestDatabase } from "./TestDatabase.ts"

export class BaseUrl extends Context.Tag("test/BaseUrl")<BaseUrl, string>() {}

const baseUrlLayer = Layer.effect(
  BaseUrl,
  Effect.map(HttpServer.HttpServer, (server) =>
    server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : "http://unix"
  )
)

/**
 * The whole service on a real listener at 127.0.0.1 (a free port) over a fresh database (or the
 * given one), with its services exposed to the test. Rate limiting is lifted unless the test sets
 * it. Logs below `logLevel` are dropped.
 */
export const TestServer = (env: Record<string, string> = {}, logLevel: LogLevel.LogLevel = LogLevel.Warning) =>
  TestServerOn(makeTestDatabase(), env, logLevel)

/** The same over the given database: instances over one database see each other's changes. */
export const TestServerOn = <R>(
  database: Layer.Layer<SqlClient.SqlClient | DatabasePool, SqlError, R>,
  env: Record<string, string> = {},
  logLevel: LogLevel.LogLevel = LogLevel.Warning
) =>
  baseUrlLayer.pipe(
    Layer.provideMerge(httpLayer({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(Shutdown.layer),
    Layer.provideMerge(coreLayer(database)),
    Layer.provideMerge(
      AppConfig.layerFromMap({
        DATA_DIR: mkdtempSync(join(tmpdir(), "links-test-")),
        RATE_LIMIT_PER_SECOND: "100000",
        RATE_LIMIT_PER_TOKEN_PER_SECOND: "100000",
        TOKEN_SECRET: "test token secret",
        ...env
      })
    ),
    Layer.provide(Logger.minimumLogLevel(logLevel))
  )
