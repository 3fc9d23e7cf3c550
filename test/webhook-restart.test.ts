import { HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { coreLayer, httpLayer } from "../src/App.ts"
import { AppConfig } from "../src/Config.ts"
import { Shutdown } from "../src/Platform/Shutdown.ts"
import { embeddedClientLayer, serverClientLayer } from "../src/Sql/Database.ts"
import { newDomain, newLink } from "./support/Fixtures.ts"
import { call, newUser, numberAt, within } from "./support/Http.ts"
import { receiver } from "./support/Receiver.ts"
import { scopedServerDatabase, testServerUrl } from "./support/TestDatabase.ts"
import { BaseUrl } from "./support/TestServer.ts"

const dataDir = mkdtempSync(join(tmpdir(), "links-webhook-restart-"))

/** The whole service over one database that outlives it (`url`, or the embedded one in `dataDir`). */
const service = (url: string | undefined) =>
  Layer.effect(
    BaseUrl,
    Effect.map(HttpServer.HttpServer, (server) => (server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : "http://unix"))
  ).pipe(
    Layer.provideMerge(httpLayer({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(Shutdown.layer),
    Layer.provideMerge(
      coreLayer(url === undefined ? embeddedClientLayer(dataDir) : serverClientLayer(Redacted.make(url), { maxConnections: 5, applicationName: "links-webhook-restart" }))
    ),
    Layer.provideMerge(
      AppConfig.layerFromMap({
        DATA_DIR: dataDir,
        TOKEN_SECRET: "restart test secret",
        RATE_LIMIT_PER_SECOND: "100000",
        RATE_LIMIT_PER_TOKEN_PER_SECOND: "100000",
        URL_CHECK_ALLOW_PRIVATE: "true",
        WEBHOOK_POLL_MILLIS: "100",
        WEBHOOK_RETRY_SECONDS: "2",
        SHUTDOWN_DRAIN_SECONDS: "0"
      })
    ),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )

describe("webhooks across a restart", () => {
  it.scopedLive("a delivery pending when the service stops goes out from the next start, once", () =>
    Effect.gen(function* () {
      const url = testServerUrl === undefined ? undefined : (yield* scopedServerDatabase(testServerUrl, "links_webhook_restart")).url
      let healthy = false
      const hook = yield* receiver(() => (healthy ? { status: 200 } : { status: 503 }))
      yield* Effect.scoped(
        Effect.gen(function* () {
          const user = yield* newUser()
          const domainId = yield* newDomain(user)
          const created = yield* call("POST", `/api/v4/${domainId}/webhooks`, { token: user.token, body: { url: hook.url, events: ["link.created"] } })
          expect(created.status).toBe(200)
          yield* newLink(user, domainId)
          expect(yield* within(5000, Effect.sync(() => hook.received.length >= 1))).toBeLessThan(5000)
          expect(numberAt(created.body, "objects", 0, "id")).toBeGreaterThan(0)
        }).pipe(Effect.provide(service(url)))
      )
      // Stopped between the failed attempt and its retry; the receiver is fixed meanwhile.
      healthy = true
      yield* Effect.scoped(
        Effect.gen(function* () {
          expect(yield* within(8000, Effect.sync(() => hook.received.length >= 2))).toBeLessThan(8000)
          yield* Effect.sleep("2500 millis")
        }).pipe(Effect.provide(service(url)))
      )
      expect(hook.received.length).toBe(2)
      expect(hook.received[1]!.headers["webhook-id"]).toBe(hook.received[0]!.headers["webhook-id"])
      expect(hook.received[1]!.body).toBe(hook.received[0]!.body)
    }), 60_000)
})
