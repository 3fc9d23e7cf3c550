import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import pg from "pg"
import { testServerUrl } from "./TestDatabase.ts"

/** The test server's own database, as a URL another session can connect to (PostgreSQL only). */
const databaseUrl = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ name: string }>`SELECT current_database() AS name`
  if (testServerUrl === undefined || row === undefined) return yield* Effect.dieMessage("locks need TEST_DATABASE_URL")
  const url = new URL(testServerUrl)
  url.pathname = `/${row.name}`
  return url.toString()
}).pipe(Effect.orDie)

/**
 * Another session takes ACCESS EXCLUSIVE locks on the tables whose names match `pattern` (SQL LIKE)
 * in an open transaction: every statement reading one of them waits, as a slow one would, until
 * `release` or the end of the scope, or until it is cancelled.
 */
export const holdLocks = (pattern: string) =>
  Effect.gen(function* () {
    const url = yield* databaseUrl
    const client = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        await client.query("BEGIN")
        const { rows } = await client.query<{ names: string | null }>(
          "SELECT string_agg(quote_ident(tablename), ', ') AS names FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE $1",
          [pattern]
        )
        const names = rows[0]?.names
        if (names === null || names === undefined) throw new Error(`no table matches ${pattern}`)
        await client.query(`LOCK TABLE ${names} IN ACCESS EXCLUSIVE MODE`)
        return client
      }),
      (client) => Effect.promise(() => client.end().catch(() => undefined))
    )
    return { release: Effect.promise(() => client.query("ROLLBACK").then(() => undefined)) }
  })

/** How many statements of the test server's database wait for a lock (`pg_stat_activity`). */
export const waitingOnLocks = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    (rows) => rows[0]?.n ?? 0
  )
).pipe(Effect.orDie)
