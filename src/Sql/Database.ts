import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import pg from "pg"
import { AppConfig } from "../Config.ts"
import { announceSocket, announcedSocket } from "./EmbeddedSocket.ts"
import { embeddedThread } from "./EmbeddedThread.ts"
import { privateDataDir } from "../Platform/DataDir.ts"

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

/**
 * The `pg` pool under the `SqlClient`, for the two places that use it directly: the redirect hot
 * path's cache misses and the change feed. `shared` is true on a PostgreSQL server, where other
 * instances may write; the embedded database has this process as its only writer.
 */
/** TLS settings another thread can be given: plain data, no callbacks. */
export interface SslOptions {
  readonly rejectUnauthorized?: boolean
  readonly ca?: string | Buffer
  readonly cert?: string | Buffer
  readonly key?: string | Buffer
  readonly servername?: string
}

/** How another thread of this process opens connections of its own to the same database (plain data). */
export interface Connection {
  readonly connectionString?: string
  readonly host?: string
  readonly port?: number
  readonly user?: string
  readonly password?: string
  readonly database?: string
  readonly ssl?: boolean | SslOptions
  readonly options?: string
  readonly connectionTimeoutMillis: number
  readonly idleTimeoutMillis?: number
  /** Connections another thread may open; the embedded database takes few. */
  readonly threadConnections: number
  /** Whether connections take `COPY ... FROM STDIN` (`CopyPool`): a server does, the embedded database does not. */
  readonly copyFromStdin: boolean
}

/**
 * The pool under the `SqlClient` when its connections take `COPY ... FROM STDIN`, for the click writer's
 * bulk loads; absent on the embedded database, whose socket server loses the protocol's thread on it.
 */
export class CopyPool extends Context.Tag("CopyPool")<CopyPool, pg.Pool>() {}

type NotificationListener = (message: pg.Notification) => void

export class DatabasePool extends Context.Tag("DatabasePool")<
  DatabasePool,
  {
    readonly pool: pg.Pool
    readonly shared: boolean
    readonly connection: Connection
    /** Called with every notification any pooled connection receives on `CHANGES_CHANNEL`. */
    readonly notificationListeners: Set<NotificationListener>
  }
>() {}

/** The installation's name (sql/0024): what keeps the Redis keys of deployments sharing a Redis apart. */
export const installationName = (pool: pg.Pool) =>
  Effect.map(
    Effect.promise(() => pool.query<{ name: string }>("SELECT name FROM installation")),
    ({ rows }) => rows[0]!.name
  )

/** The channel the triggers of `sql/0004_clicks.sql` announce link and domain changes on. */
export const CHANGES_CHANNEL = "links_changes"

/** A `pg` pool over `connection`, ended (for at most a second) when the scope closes. */
const scopedPool = (connection: Connection, max: number, applicationName: string, onConnect?: (client: pg.ClientBase) => Promise<void>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const { threadConnections: _, copyFromStdin: __, ...config } = connection
      const pool = new pg.Pool({ ...config, max, application_name: applicationName, types, ...(onConnect === undefined ? {} : { onConnect }) })
      // Errors of idle clients are reported here; the next query on the pool reports them again.
      pool.on("error", () => undefined)
      return pool
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(1000))
  )

/** `open` as the first use of a pool: its failure says that the database cannot be reached. */
const reachable = (open: () => Promise<unknown>) =>
  Effect.tryPromise({ try: open, catch: (cause) => new SqlError({ cause, message: "cannot connect to the database" }) })

/** The `PgClient` over `pool`, and the pool for binary COPY where the database takes it. */
const clientLayers = (pool: pg.Pool, connection: Connection) =>
  Layer.merge(
    PgClient.layerFromPool({ acquire: Effect.succeed(pool), types }),
    connection.copyFromStdin ? Layer.succeed(CopyPool, pool) : Layer.empty
  )

/** What a pool of the service gives: the `PgClient` (and `CopyPool`) over it, and `DatabasePool`. */
const poolLayers = (pool: pg.Pool, connection: Connection, shared: boolean, notificationListeners = new Set<NotificationListener>()) =>
  Layer.merge(clientLayers(pool, connection), Layer.succeed(DatabasePool, { pool, shared, connection, notificationListeners }))

export const poolClientLayer = (connection: Connection, options: { readonly max: number; readonly applicationName: string }, shared: boolean) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      // Every connection listens before its first use, so that a change made through it is
      // announced to this process before the statement that made it returns.
      const notificationListeners = new Set<NotificationListener>()
      const onConnect = async (client: pg.ClientBase) => {
        client.on("notification", (message) => {
          for (const listener of notificationListeners) listener(message)
        })
        await client.query(`LISTEN ${CHANGES_CHANNEL}`)
      }
      const pool = yield* scopedPool(connection, options.max, options.applicationName, onConnect)
      yield* reachable(() => pool.query("SELECT 1"))
      return poolLayers(pool, connection, shared, notificationListeners)
    })
  )

/** Connections to the PostgreSQL server at `url`. */
const serverConnection = (url: Redacted.Redacted<string>): Connection => ({
  connectionString: Redacted.value(url),
  connectionTimeoutMillis: 5000,
  idleTimeoutMillis: 30_000,
  // Report queries over rollups are short: JIT compilation only adds to them (tens of ms), and
  // their sorts and aggregates over a year of rows fit in 16 MB instead of spilling to disk.
  options: "-c jit=off -c work_mem=16MB",
  threadConnections: 2,
  copyFromStdin: true
})

/** A `PgClient` on a PostgreSQL server. */
export const serverClientLayer = (url: Redacted.Redacted<string>, options: PoolOptions) =>
  poolClientLayer(serverConnection(url), { max: options.maxConnections, applicationName: options.applicationName ?? "link-shortener" }, true)

/**
 * The admin CLI's one connection, without a check query or `LISTEN`: a command ends before a cache of
 * its own could miss a change, and the caches of running instances hear its changes through their own
 * connections. Opened here, so that a database that cannot be reached is said as the server says it.
 */
const commandClientLayer = (connection: Connection, shared: boolean) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const pool = yield* scopedPool(connection, 1, "link-shortener-cli")
      yield* reachable(() => pool.connect().then((client) => client.release()))
      return poolLayers(pool, connection, shared)
    })
  )

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
export const lockHolder = (file: string) => {
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
  writeFileSync(draft, `${process.pid}\n`, { mode: 0o600 })
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
 * The embedded database: PGlite in `dataDir` (or in memory for "memory://"), on a thread of its own
 * (`EmbeddedThread.ts`), served over a Unix socket so that the unchanged `PgClient` talks to it.
 * PGlite runs one statement at a time, so the pool holds one connection: transactions cannot
 * interleave.
 */
export const embeddedClientLayer = (dataDir: string) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const inMemory = dataDir === "memory://"
      const dbPath = inMemory ? dataDir : resolve(dataDir, "pg")
      if (!inMemory) {
        yield* privateDataDir(dataDir).pipe(Effect.mapError((refused) => new SqlError({ cause: refused, message: refused.message })))
        mkdirSync(dbPath, { recursive: true, mode: 0o700 })
        yield* lockEmbedded(dataDir)
      }
      const socketDir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "links-pg-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      let heard = (_: pg.Notification): void => undefined
      yield* embeddedThread(dbPath, join(socketDir, ".s.PGSQL.5432"), (message) => heard(message))
      if (!inMemory) yield* announceSocket(dataDir, socketDir)
      return poolClientLayer(embeddedConnection(socketDir), { max: 1, applicationName: "link-shortener" }, false).pipe(
        Layer.tap((context) =>
          Effect.sync(() => {
            const { notificationListeners } = Context.get(context, DatabasePool)
            heard = (message) => {
              for (const listener of notificationListeners) listener(message)
            }
          })
        )
      )
    })
  )

const embeddedConnection = (socketDir: string): Connection => ({
  host: socketDir,
  port: 5432,
  user: "postgres",
  database: "postgres",
  connectionTimeoutMillis: 30_000,
  threadConnections: 1,
  copyFromStdin: false
})

/**
 * The database of an operator's command: PostgreSQL at `DATABASE_URL`; else the embedded database
 * through the socket of the server that holds it, or opened here when no server runs.
 */
export const AdminDatabaseLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.databaseUrl, {
      onSome: (url) => commandClientLayer(serverConnection(url), true),
      onNone: () => {
        const served = lockHolder(resolve(config.dataDir, "pglite.lock")) === undefined ? undefined : announcedSocket(config.dataDir)
        return served === undefined
          ? embeddedClientLayer(config.dataDir)
          : commandClientLayer(embeddedConnection(served), false)
      }
    })
  )
)

/**
 * A `PgClient` of another thread over `connection`, without the change feed: it neither listens nor
 * checks the database at start (a thread started while the database is down must come up).
 */
export const threadClientLayer = (connection: Connection, applicationName: string) =>
  Layer.unwrapScoped(
    Effect.map(scopedPool(connection, connection.threadConnections, applicationName), (pool) => clientLayers(pool, connection))
  )

/** PostgreSQL when `DATABASE_URL` is set, otherwise the embedded database in `DATA_DIR`. */
export const DatabaseLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.databaseUrl, {
      onNone: () => embeddedClientLayer(config.dataDir),
      onSome: (url) => serverClientLayer(url, { maxConnections: config.dbPoolSize })
    })
  )
)
