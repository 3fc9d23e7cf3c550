import { Effect } from "effect"
import { call, stringAt } from "./Http.ts"
import { type ServiceProcess, spawnService, tempDir, waitReady } from "./ServiceProcess.ts"
import { scopedServerDatabase } from "./TestDatabase.ts"
import { BaseUrl } from "./TestServer.ts"

/** Requests of `effect` go to this service. */
export const on = (service: ServiceProcess) => Effect.provideService(BaseUrl, service.url)

/**
 * Two service processes (`a` started and ready first, then `b`) on one fresh database of the
 * PostgreSQL server at `serverUrl`, sharing a token secret, rate limits lifted; the first start's
 * admin logged in on `a`. Both are killed and the database dropped with the scope.
 */
export const twoInstances = (serverUrl: string, prefix: string) =>
  Effect.gen(function* () {
    const { url } = yield* scopedServerDatabase(serverUrl, prefix)
    const env = {
      DATABASE_URL: url,
      TOKEN_SECRET: "shared secret of both instances",
      ADMIN_EMAIL: "two@example.org",
      ADMIN_PASSWORD: "a long operator password 42",
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_PER_TOKEN_PER_SECOND: "100000",
      LOG_LEVEL: "warning"
    }
    const a = yield* spawnService({ ...env, DATA_DIR: tempDir() })
    yield* waitReady(a)
    const b = yield* spawnService({ ...env, DATA_DIR: tempDir() })
    yield* waitReady(b)
    const login = yield* call("POST", "/api/v4/access_token", { body: { email: env.ADMIN_EMAIL, password: env.ADMIN_PASSWORD } }).pipe(on(a))
    return { url, a, b, token: stringAt(login.body, "access_token") }
  })
