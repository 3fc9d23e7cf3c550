import { describe, it } from "vitest"
import { testServerUrl } from "./TestDatabase.ts"

/**
 * Why a test that needs a PostgreSQL server is skipped on the embedded database (the README's
 * `npm test`), or undefined when TEST_DATABASE_URL names a server.
 */
export const withoutServer = (why: string) =>
  testServerUrl === undefined ? `needs a PostgreSQL server (TEST_DATABASE_URL): ${why}` : undefined

/** Why a test that needs Redis is skipped, or undefined when `reachable`. */
export const withoutRedis = (reachable: boolean, why: string) =>
  reachable ? undefined : `needs Redis (TEST_REDIS_URL, default redis://127.0.0.1:6379): ${why}`

/**
 * The block `body` when nothing is missing; otherwise, instead of it, one skipped test whose line in
 * the report says why (vitest prints a skip's note, not a skipped block's reason).
 */
export const describeUnless = (missing: string | undefined, name: string, body: () => void) =>
  missing === undefined
    ? describe(name, body)
    : describe(name, () => {
        it("is skipped", (context) => context.skip(missing))
      })
