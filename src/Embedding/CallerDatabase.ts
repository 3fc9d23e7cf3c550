import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Redacted } from "effect"
import { AppConfig } from "../Config.ts"
import { type Connection, poolClientLayer, type SslOptions } from "../Sql/Database.ts"

const sslOf = (ssl: PgClient.PgClientConfig["ssl"]): boolean | SslOptions | undefined => {
  if (ssl === undefined || typeof ssl === "boolean") return ssl
  const { rejectUnauthorized, servername } = ssl
  const pem = (value: unknown) => (typeof value === "string" || Buffer.isBuffer(value) ? value : undefined)
  const [ca, cert, key] = [pem(ssl.ca), pem(ssl.cert), pem(ssl.key)]
  return {
    ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
    ...(servername === undefined ? {} : { servername }),
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key })
  }
}

const defined = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/**
 * The database a caller's `PgClient` reaches (its address and credentials, TLS settings as plain
 * data), with the service's own connection settings: what the service's pool and its click writer
 * thread open (docs/decisions/0016-embedding.md).
 */
export const connectionOf = (config: PgClient.PgClientConfig): Connection => ({
  ...defined("connectionString", config.url === undefined ? undefined : Redacted.value(config.url)),
  ...defined("host", config.path ?? config.host),
  ...defined("port", config.port),
  ...defined("user", config.username),
  ...defined("password", config.password === undefined ? undefined : Redacted.value(config.password)),
  ...defined("database", config.database),
  ...defined("ssl", sslOf(config.ssl)),
  connectionTimeoutMillis: config.connectTimeout === undefined ? 5000 : Duration.toMillis(config.connectTimeout),
  idleTimeoutMillis: config.idleTimeout === undefined ? 30_000 : Duration.toMillis(config.idleTimeout),
  options: "-c jit=off -c work_mem=16MB",
  threadConnections: 2,
  copyFromStdin: true
})

/**
 * The service's database over the one the caller's `PgClient` reaches: a pool of its own of
 * `DB_POOL_SIZE` connections (int8 as numbers, every connection listening for changes, binary COPY)
 * and the click writer thread's connections, closed with the layer. The caller's client is only read.
 */
export const CallerDatabaseLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const client = yield* PgClient.PgClient
    const config = yield* AppConfig
    return poolClientLayer(connectionOf(client.config), { max: config.dbPoolSize, applicationName: client.config.applicationName ?? "link-shortener" }, true)
  })
)
