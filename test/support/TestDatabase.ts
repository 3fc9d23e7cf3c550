import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { embeddedClientLayer, serverClientLayer } from "../../src/Sql/Database.ts"

/** The PostgreSQL server tests run on, when one is configured; otherwise they use embedded PGlite. */
export const testServerUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL

/** One statement on the server's maintenance connection (CREATE / DROP DATABASE). */
export const adminQuery = async (serverUrl: string, text: string) => {
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/** A new, empty database on the server, named after `prefix`; its URL and name. */
export const createServerDatabase = async (serverUrl: string, prefix: string) => {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return { name, url: url.toString() }
}

export const dropServerDatabase = (serverUrl: string, name: string) =>
  adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)

/** A database on the server for the life of the scope. */
export const scopedServerDatabase = (serverUrl: string, prefix: string) =>
  Effect.acquireRelease(Effect.promise(() => createServerDatabase(serverUrl, prefix)), ({ name }) =>
    Effect.promise(() => dropServerDatabase(serverUrl, name)).pipe(Effect.ignore)
  )

/** A fresh database created for the test file and dropped after it, on the server or embedded. */
export const makeTestDatabase = () => {
  if (testServerUrl === undefined) return embeddedClientLayer("memory://")
  const serverUrl = testServerUrl
  return Layer.unwrapScoped(
    Effect.map(scopedServerDatabase(serverUrl, "links_test"), ({ url }) =>
      serverClientLayer(Redacted.make(url), { maxConnections: 5, applicationName: "links-test" })
    )
  )
}
