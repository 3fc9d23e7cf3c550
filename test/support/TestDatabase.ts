import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { embeddedClient, serverClient } from "../../src/Sql/Database.ts"

/** The PostgreSQL server tests run on, when one is configured; otherwise they use embedded PGlite. */
export const testServerUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

const adminQuery = (url: string, text: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await client.query(text)
    } finally {
      await client.end()
    }
  })

/** A fresh database created for the test file and dropped after it, on the server or embedded. */
export const makeTestDatabase = () => {
  if (testServerUrl === undefined) return embeddedClient("memory://")
  const url = testServerUrl
  return Layer.unwrapScoped(
    Effect.gen(function* () {
      const name = `links_test_${randomBytes(6).toString("hex")}`
      yield* Effect.acquireRelease(adminQuery(url, `CREATE DATABASE ${name}`), () =>
        adminQuery(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore)
      )
      return serverClient(Redacted.make(withDatabase(url, name)), { maxConnections: 5, applicationName: "links-test" })
    })
  )
}
