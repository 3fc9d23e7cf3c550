import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option } from "effect"
import { loadMigrations, migrate, migrateIfBehind, migrationIds } from "../src/Sql/Migrator.ts"
import { makeTestDatabase } from "./support/TestDatabase.ts"

/** The migrator's advisory lock (src/Sql/Migrator.ts): held here, `migrate` waits for it. */
const MIGRATION_LOCK = 7_243_091

describe("the admin CLI's migration check (migrateIfBehind)", () => {
  it("knows the migrations by their file names alone", () => {
    expect(migrationIds().slice().sort((a, b) => a - b)).toEqual(loadMigrations().map((m) => m.id))
  })

  it.scopedLive(
    "migrates a fresh database, then answers [] from one statement, without the migrator's lock, also when the database is newer",
    () =>
      Effect.gen(function* () {
        const context = yield* Layer.build(makeTestDatabase())
        const sql = yield* Effect.provide(SqlClient.SqlClient, context)
        const all = loadMigrations().map((m) => m.id)
        expect(yield* Effect.provide(migrateIfBehind, context)).toEqual(all)
        expect(yield* Effect.provide(migrateIfBehind, context)).toEqual([])

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

        // A migration this release does not know (a newer one applied it): used as it is.
        yield* sql`INSERT INTO schema_migrations (id, name) VALUES (9999, 'from_a_newer_release')`
        expect(yield* Effect.provide(migrateIfBehind, context)).toEqual([])

        // One of this release's migrations missing: the migrator runs (it waits for the lock).
        const last = all[all.length - 1]!
        yield* sql`DELETE FROM schema_migrations WHERE id = ${last}`
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
