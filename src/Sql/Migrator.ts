import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
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

const MIGRATION_FILE = /^(\d+)_(.+)\.sql$/

/** The migration files in `dir` by their names alone, unsorted. */
const migrationFiles = (dir: string) =>
  readdirSync(dir).flatMap((file) => {
    const match = MIGRATION_FILE.exec(file)
    return match === null ? [] : [{ file, id: Number(match[1]), name: match[2]! }]
  })

export const loadMigrations = (dir = MIGRATIONS_DIR): ReadonlyArray<Migration> =>
  migrationFiles(dir)
    .map(({ file, id, name }) => ({ id, name, sql: readFileSync(`${dir}/${file}`, "utf8") }))
    .sort((a, b) => a.id - b.id)

/** The ids of the migrations in `dir`, from the file names alone. */
export const migrationIds = (dir = MIGRATIONS_DIR): ReadonlyArray<number> => migrationFiles(dir).map(({ id }) => id)

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

const UNDEFINED_TABLE = "42P01"

const isUndefinedTable = (error: SqlError) =>
  typeof error.cause === "object" && error.cause !== null && "code" in error.cause && error.cause.code === UNDEFINED_TABLE

/**
 * `migrate` only when the database lacks one of the migrations in `sql/`: one statement when it has
 * them all, the usual case of a short-lived process (the admin CLI), where the lock, the transaction
 * and reading every file took several round trips. A database with migrations this code does not know
 * (a newer release migrated it) is used as it is, as `migrate` would.
 */
export const migrateIfBehind = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const applied = yield* sql<{ id: number }>`SELECT id FROM schema_migrations`.pipe(
    Effect.map((rows) => new Set(rows.map((row) => row.id))),
    Effect.catchIf(isUndefinedTable, () => Effect.succeed(new Set<number>()))
  )
  return migrationIds().every((id) => applied.has(id)) ? [] : yield* migrate
})
