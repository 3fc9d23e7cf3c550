import { Effect } from "effect"
import { Accounts } from "../../src/Accounts/Accounts.ts"
import type { Caller, Plan, Role } from "../../src/Accounts/User.ts"
import { BaseUrl } from "./TestServer.ts"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
  readonly text: string
}

export interface RequestOptions {
  readonly token?: string
  readonly body?: unknown
  readonly rawBody?: string
  readonly headers?: Record<string, string>
}

/** One HTTP request to the test server, answered as status, headers and parsed JSON body. */
export const call = (method: string, path: string, options: RequestOptions = {}) =>
  Effect.gen(function* () {
    const base = yield* BaseUrl
    const headers: Record<string, string> = { ...options.headers }
    if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
    const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body))
    if (body !== undefined) headers["content-type"] ??= "application/json"
    return yield* Effect.promise(async (): Promise<Reply> => {
      const response = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
      const text = await response.text()
      let parsed: unknown = undefined
      try {
        parsed = text === "" ? undefined : JSON.parse(text)
      } catch {
        parsed = undefined
      }
      return { status: response.status, headers: response.headers, body: parsed, text }
    })
  })

export const PASSWORD = "correct horse battery staple"

export interface TestUser {
  readonly userId: number
  readonly accountId: number
  readonly email: string
  readonly token: string
  readonly refreshToken: string
}

let counter = 0

/** A new account (plan and role as asked) with one user, logged in through E2. */
export const newUser = (options: { plan?: Plan; role?: Role; accountId?: number } = {}) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    const accountId =
      options.accountId ??
      (yield* accounts.createAccount({ name: `account ${++counter}`, plan: options.plan ?? "enterprise", linkQuota: null })).id
    const email = `user${++counter}.${Date.now()}@example.com`
    const user = yield* accounts.createUser({
      accountId,
      email,
      password: PASSWORD,
      role: options.role ?? "account_admin"
    })
    const reply = yield* call("POST", "/api/v4/access_token", { body: { email, password: PASSWORD } })
    if (reply.status !== 200) return yield* Effect.dieMessage(`login failed: ${reply.text}`)
    const token = stringAt(reply.body, "access_token")
    return { userId: user.user_id, accountId, email, token, refreshToken: user.refresh_token } satisfies TestUser
  }).pipe(Effect.orDie)

/** A test user as the caller a use-case service takes, for calling it without HTTP. */
export const callerOf = (user: TestUser, role: Role = "account_admin", plan: Plan = "enterprise"): Caller => ({
  userId: user.userId,
  accountId: user.accountId,
  email: user.email,
  nickname: user.email.split("@")[0] ?? "",
  role,
  plan,
  linkQuota: null
})

/** The value at a path of keys and indexes in a JSON answer (undefined where the path ends early). */
export const at = (value: unknown, ...path: ReadonlyArray<string | number>): unknown => {
  let current = value
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined
    current = (current as Record<string | number, unknown>)[key]
  }
  return current
}

export const numberAt = (value: unknown, ...path: ReadonlyArray<string | number>): number => {
  const found = at(value, ...path)
  if (typeof found !== "number") throw new Error(`expected a number at ${path.join(".")}: ${JSON.stringify(value)}`)
  return found
}

export const stringAt = (value: unknown, ...path: ReadonlyArray<string | number>): string => {
  const found = at(value, ...path)
  if (typeof found !== "string") throw new Error(`expected a string at ${path.join(".")}: ${JSON.stringify(value)}`)
  return found
}

/** The error codes of a failed answer, in order. */
export const codes = (reply: Reply): ReadonlyArray<unknown> => {
  const errors = at(reply.body, "errors")
  return Array.isArray(errors) ? errors.map((e) => at(e, "code")) : []
}

/** The result of `effect` and the milliseconds it took. */
export const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const started = performance.now()
    const result = yield* effect
    return [result, performance.now() - started] as const
  })

/** Polls `check` every 50 ms until it holds or `ms` have passed; the time it took. */
export const within = <R>(ms: number, check: Effect.Effect<boolean, never, R>) =>
  Effect.gen(function* () {
    const started = Date.now()
    while (!(yield* check)) {
      if (Date.now() - started > ms) return Number.POSITIVE_INFINITY
      yield* Effect.sleep("50 millis")
    }
    return Date.now() - started
  })
