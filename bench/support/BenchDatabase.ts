import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import type { Cleanup } from "./Cleanup.ts"

export interface BenchDatabase {
  readonly kind: string
  /** Variables that point the service at this database. */
  readonly env: Record<string, string>
}

const adminQuery = async <Row extends object>(url: string, text: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<Row>(text)).rows
  } finally {
    await client.end()
  }
}

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/**
 * A fresh database on the PostgreSQL server named by BENCH_DATABASE_URL or DATABASE_URL, or else
 * embedded PGlite in a temporary DATA_DIR; `cleanup` removes either.
 */
export const benchDatabase = async (cleanup: Cleanup): Promise<BenchDatabase> => {
  const dataDir = await mkdtemp(join(tmpdir(), "links-bench-"))
  cleanup.defer("remove the data directory", () => rm(dataDir, { recursive: true, force: true }))
  const serverUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL
  if (serverUrl === undefined || serverUrl === "") {
    return { kind: "embedded PGlite", env: { DATA_DIR: dataDir } }
  }
  const name = `links_bench_${randomBytes(6).toString("hex")}`
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`)
  cleanup.defer(`drop database ${name}`, async () => {
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  })
  const [version] = await adminQuery<{ server_version: string }>(serverUrl, "SHOW server_version")
  return {
    kind: `PostgreSQL ${version?.server_version ?? "?"} (database ${name})`,
    env: { DATA_DIR: dataDir, DATABASE_URL: withDatabase(serverUrl, name) }
  }
}
