import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Context, Effect, Layer, LogLevel, Redacted } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { openTcpProxy } from "../../bench/support/TcpProxy.ts"
import { serverClientLayer } from "../../src/Sql/Database.ts"
import { scopedServerDatabase, testServerUrl } from "./TestDatabase.ts"
import { TestServerOn } from "./TestServer.ts"

/** The network path between the service and its database, which a test can cut and restore. */
export class DatabaseLink extends Context.Tag("test/DatabaseLink")<
  DatabaseLink,
  {
    readonly url: string
    /** The same database without the proxy (PostgreSQL only). */
    readonly directUrl: string | undefined
    readonly cut: Effect.Effect<void>
    readonly blackhole: Effect.Effect<void>
    readonly restore: Effect.Effect<void>
  }
>() {}

type Target = { readonly host: string; readonly port: number } | { readonly path: string }

/** A fresh database on the test PostgreSQL server, or an in-memory PGlite behind a Unix socket. */
const backend = Effect.gen(function* () {
  if (testServerUrl !== undefined) {
    const url = testServerUrl
    const { name } = yield* scopedServerDatabase(url, "links_ops")
    const parsed = new URL(url)
    const target: Target = { host: parsed.hostname, port: Number(parsed.port || 5432) }
    parsed.pathname = `/${name}`
    return { target, user: decodeURIComponent(parsed.username || "postgres"), database: name, directUrl: parsed.href }
  }
  const db = yield* Effect.acquireRelease(
    Effect.promise(() => PGlite.create("memory://")),
    (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
  )
  const dir = mkdtempSync(join(tmpdir(), "links-ops-"))
  const path = join(dir, ".s.PGSQL.5432")
  const server = new PGLiteSocketServer({ db, path, maxConnections: 8 })
  yield* Effect.acquireRelease(Effect.promise(() => server.start()), () =>
    Effect.promise(() => server.stop()).pipe(
      Effect.ignore,
      Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    )
  )
  const target: Target = { path }
  return { target, user: "postgres", database: "postgres", directUrl: undefined }
})

const linkLayer = Layer.scoped(
  DatabaseLink,
  Effect.gen(function* () {
    const { target, user, database, directUrl } = yield* backend
    const proxy = yield* Effect.acquireRelease(
      Effect.promise(() => openTcpProxy(target)),
      (proxy) => Effect.promise(proxy.close)
    )
    return {
      url: `postgres://${encodeURIComponent(user)}@127.0.0.1:${proxy.port}/${database}`,
      directUrl,
      cut: Effect.sync(proxy.cut),
      blackhole: Effect.sync(proxy.blackhole),
      restore: Effect.sync(proxy.restore)
    }
  })
)

/**
 * The whole service like `TestServer`, but reaching its database through a proxy that the test can
 * cut or black-hole (`DatabaseLink`), to see how it behaves when the database stops answering.
 */
export const BreakableServer = (env: Record<string, string> = {}, logLevel: LogLevel.LogLevel = LogLevel.Error) => {
  const database = Layer.unwrapEffect(
    Effect.map(DatabaseLink, (link) =>
      serverClientLayer(Redacted.make(link.url), { maxConnections: testServerUrl === undefined ? 1 : 4 })
    )
  ).pipe(Layer.provide(linkLayer))
  return TestServerOn(database, env, logLevel).pipe(Layer.provideMerge(linkLayer))
}
