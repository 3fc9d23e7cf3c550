import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import pg from "pg"
import { AppConfig } from "../Config.ts"

const INT8_OID = 20

/** int8 ids and counts come back as numbers (all of ours stay below 2^53), everything else as `pg` decides. */
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser
}

export interface PoolOptions {
  readonly maxConnections: number
  readonly applicationName?: string
}

/** A `PgClient` on a PostgreSQL server. */
export const serverClient = (url: Redacted.Redacted<string>, options: PoolOptions) =>
  PgClient.layer({
    url,
    types,
    maxConnections: options.maxConnections,
    connectTimeout: Duration.seconds(5),
    idleTimeout: Duration.seconds(30),
    applicationName: options.applicationName ?? "link-shortener"
  })

/**
 * The embedded database: PGlite in `dataDir` (or in memory for "memory://"), served over a Unix
 * socket so that the unchanged `PgClient` talks to it. PGlite runs one statement at a time, so the
 * pool holds one connection: transactions cannot interleave.
 */
export const embeddedClient = (dataDir: string) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const inMemory = dataDir === "memory://"
      const dbPath = inMemory ? dataDir : resolve(dataDir, "pg")
      if (!inMemory) mkdirSync(dbPath, { recursive: true })
      const db = yield* Effect.acquireRelease(
        Effect.promise(() => PGlite.create(dbPath)),
        (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
      )
      const socketDir = mkdtempSync(join(tmpdir(), "links-pg-"))
      const server = new PGLiteSocketServer({ db, path: join(socketDir, ".s.PGSQL.5432"), maxConnections: 2 })
      yield* Effect.acquireRelease(Effect.promise(() => server.start()), () =>
        Effect.promise(() => server.stop()).pipe(
          Effect.ignore,
          Effect.ensuring(Effect.sync(() => rmSync(socketDir, { recursive: true, force: true })))
        )
      )
      return PgClient.layer({
        host: socketDir,
        port: 5432,
        username: "postgres",
        database: "postgres",
        types,
        maxConnections: 1,
        connectTimeout: Duration.seconds(30),
        applicationName: "link-shortener"
      })
    })
  )

/** PostgreSQL when `DATABASE_URL` is set, otherwise the embedded database in `DATA_DIR`. */
export const DatabaseLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.databaseUrl, {
      onNone: () => embeddedClient(config.dataDir),
      onSome: (url) => serverClient(url, { maxConnections: config.dbPoolSize })
    })
  )
)
