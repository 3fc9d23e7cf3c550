import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
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

const errorCode = (error: unknown) => (error instanceof Error && "code" in error ? error.code : undefined)

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return errorCode(error) === "EPERM"
  }
}

/**
 * The live process other than this one named in the lock file, if any. A lock naming this very pid is
 * stale: in a container the server is pid 1 again after a crash.
 */
const lockHolder = (file: string) => {
  try {
    const pid = Number(readFileSync(file, "utf8").trim())
    return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isRunning(pid) ? pid : undefined
  } catch {
    return undefined
  }
}

/** Takes `file` for this process (linked in whole, so no reader sees it half-written), or answers its live holder. */
const takeLock = (file: string): number | undefined => {
  const draft = `${file}.${process.pid}`
  writeFileSync(draft, `${process.pid}\n`)
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(draft, file)
        return undefined
      } catch (error) {
        if (errorCode(error) !== "EEXIST") throw error
      }
      const holder = lockHolder(file)
      if (holder !== undefined) return holder
      rmSync(file, { force: true })
    }
    throw new Error(`${file} keeps changing`)
  } finally {
    rmSync(draft, { force: true })
  }
}

/** PGlite opened by two processes (the CLI while the server runs) corrupts its files. */
const lockEmbedded = (dataDir: string) => {
  const file = resolve(dataDir, "pglite.lock")
  const acquire = Effect.try({
    try: () => takeLock(file),
    catch: (error) => new SqlError({ cause: error, message: `cannot lock the embedded database in ${dataDir}: ${String(error)}` })
  }).pipe(
    Effect.filterOrFail(
      (holder) => holder === undefined,
      (holder) =>
        new SqlError({
          cause: { holder, file },
          message: `the embedded database in ${dataDir} is in use by process ${holder}; stop it or set DATABASE_URL`
        })
    )
  )
  const release = Effect.try(() => {
    if (readFileSync(file, "utf8").trim() === String(process.pid)) rmSync(file, { force: true })
  }).pipe(Effect.ignore)
  return Effect.acquireRelease(acquire, () => release)
}

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
      if (!inMemory) {
        mkdirSync(dbPath, { recursive: true })
        yield* lockEmbedded(dataDir)
      }
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
