import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option } from "effect"
import { loadMigrations, migrate, migrateIfBehind, migrationIds } from "../src/Sql/Migrator.ts"
import { describeUnless, withoutServer } from "./support/SkipReasons.ts"
import { makeTestDatabase } from "./support/TestDatabase.ts"

/** The migrator's advisory lock (src/Sql/Migrator.ts): held here, `migrate` waits for it. */
const MIGRATION_LOCK = 7_243_091

/** A fresh database, migrated by `migrateIfBehind`, and its client. */
const migrated = Effect.gen(function* () {
  const context = yield* Layer.build(makeTestDatabase())
  const sql = yield* Effect.provide(SqlClient.SqlClient, context)
  expect(yield* Effect.provide(migrateIfBehind, context)).toEqual(loadMigrations().map((m) => m.id))
  return { context, sql }
})

describe("the admin CLI's migration check (migrateIfBehind)", () => {
  it("knows the migrations by their file names alone", () => {
    expect(migrationIds().slice().sort((a, b) => a - b)).toEqual(loadMigrations().map((m) => m.id))
  })

  it.scopedLive(
    "migrates a fresh database, then answers [] from one statement, also when the database is newer; runs the migrator when one is missing",
    () =>
      Effect.gen(function* () {
        const { context, sql } = yield* migrated
        expect(yield* Effect.provide(migrateIfBehind, context)).toEqual([])
        // A migration this release does not know (a newer one applied it): used as it is.
        yield* sql`INSERT INTO schema_migrations (id, name) VALUES (9999, 'from_a_newer_release')`
        expect(yield* Effect.provide(migrateIfBehind, context)).toEqual([])
        // One of this release's migrations missing: the migrator applies it.
        yield* sql`DROP TABLE installation`
        yield* sql`DELETE FROM schema_migrations WHERE id = 24`
        expect(yield* Effect.provide(migrateIfBehind, context)).toEqual([24])
      }),
    60_000
  )

  describeUnless(withoutServer("one session waits for another's advisory lock; the embedded database has one session"), "beside another migrating instance", () => {
  it.scopedLive(
    "does not take the migrator's lock for a current schema, where the migrator waits for it",
    () =>
      Effect.gen(function* () {
        const { context, sql } = yield* migrated
        // Another instance migrating holds the lock in a transaction: the check of a current schema
        // does not wait for it, where the migrator does.
        const holding = yield* sql.withTransaction(
          Effect.zipRight(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`, Effect.never)
        ).pipe(Effect.fork)
        yield* Effect.sleep("200 millis")
        expect(yield* Effect.provide(migrateIfBehind, context).pipe(Effect.timeout("5 seconds"))).toEqual([])
        const waiting = yield* Effect.provide(migrate, context).pipe(Effect.fork)
        expect(Option.isNone(yield* Fiber.join(waiting).pipe(Effect.timeoutOption("500 millis")))).toBe(true)
        yield* Fiber.interrupt(holding)
        expect(yield* Fiber.join(waiting)).toEqual([])

        // One of this release's migrations missing: the migrator runs (it waits for the lock).
        const all = loadMigrations().map((m) => m.id)
        yield* sql`DELETE FROM schema_migrations WHERE id = ${all[all.length - 1]!}`
        const lockedAgain = yield* sql.withTransaction(
          Effect.zipRight(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`, Effect.never)
        ).pipe(Effect.fork)
        yield* Effect.sleep("200 millis")
        const behind = yield* Effect.provide(migrateIfBehind, context).pipe(Effect.timeoutOption("500 millis"))
        expect(Option.isNone(behind)).toBe(true)
        yield* Fiber.interrupt(lockedAgain)
      }),
    60_000
  )
  })
})

describe("the installation's name (sql/0024), which keys its click counters in a shared Redis", () => {
  it.scopedLive("is random for a new database, and the database's own name for one that already had links", () =>
    Effect.gen(function* () {
      const { sql } = yield* migrated
      const [fresh] = yield* sql<{ name: string; database: string }>`SELECT name, current_database() AS database FROM installation`
      expect(fresh!.name).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
      const [account] = yield* sql<{ id: number }>`INSERT INTO accounts (name, plan) VALUES ('a', 'free') RETURNING id`
      const [domain] = yield* sql<{ id: number }>`INSERT INTO domains (domain, account_id) VALUES ('upgrade.example', ${account!.id}) RETURNING id`
      const [user] = yield* sql<{ id: number }>`INSERT INTO users (account_id, email, nickname, role, password_hash, refresh_token_hash)
        VALUES (${account!.id}, 'a@example.com', 'a', 'member', 'x', '\\x00') RETURNING id`
      yield* sql`INSERT INTO links (domain_id, user_id, url, alias, redirect_url) VALUES (${domain!.id}, ${user!.id}, 'https://example.com/', 'a', 'https://example.com/')`
      const sql0024 = loadMigrations().find((m) => m.id === 24)!.sql
      yield* sql.unsafe(`DROP TABLE installation; ${sql0024}`)
      const [upgraded] = yield* sql<{ name: string }>`SELECT name FROM installation`
      expect(upgraded!.name).toBe(fresh!.database)
    })
  )
})
