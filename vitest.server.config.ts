import { readdirSync, readFileSync } from "node:fs"
import { defineConfig } from "vitest/config"
import base from "./vitest.config.ts"

/**
 * `npm run test:server`: the test files with something only a PostgreSQL server shows (tests skipped
 * on the embedded database, or a file marked `// Also on a PostgreSQL server: why`), run with
 * TEST_DATABASE_URL. CI runs the whole suite as the README does (embedded), then these.
 */
const serverFiles = readdirSync("test")
  .filter((file) => file.endsWith(".test.ts"))
  .filter((file) => /withoutServer\(|\/\/ Also on a PostgreSQL server:/.test(readFileSync(`test/${file}`, "utf8")))
  .map((file) => `test/${file}`)

export default defineConfig({ ...base, test: { ...base.test, include: serverFiles } })
