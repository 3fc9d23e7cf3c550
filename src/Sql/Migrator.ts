import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

export const MIGRATIONS_DIR = fileURLToPath(new URL("../../sql/", import.meta.url))

/** Any constant works: it only has to be the same in every instance. */
const MIGRATION_LOCK = 7_243_091

export interface Migration {
  readonly id: number
  readonly name: string
  readonly sql: string
}

export const loadMigrations = (dir = MIGRATIONS_DIR): ReadonlyArray<Migration> =>
  readdirSync(dir)
    .flatMap((file) => {
      const match = /^(\d+)_(.+)\.sql$/.exec(file)
      return match === null ? [] : [{ id: Number(match[1]), name: match[2]!, sql: readFileSync(`${dir}/${file}`, "utf8") }]
    })
    .sort((a, b) => a.id - b.id)

/**
 * Applies the pending migrations of `sql/` in one transaction, under an advisory lock so that
 * instances starting together apply each migration once. Returns the ids it applied.
 */
export const migrate = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const migrations = loadMigrations()
  return yield* sql.withTransaction(
    Effect.gen(function* () {
      yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
      yield* sql`CREATE TABLE IF NOT EXISTS schema_migrations (
        id integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`
      const done = new Set((yield* sql<{ id: number }>`SELECT id FROM schema_migrations`).map((row) => row.id))
      const applied: Array<number> = []
      for (const migration of migrations) {
        if (done.has(migration.id)) continue
        yield* sql.unsafe(migration.sql)
        yield* sql`INSERT INTO schema_migrations (id, name) VALUES (${migration.id}, ${migration.name})`
        applied.push(migration.id)
      }
      return applied
    })
  )
}).pipe(Effect.withSpan("migrate"))
