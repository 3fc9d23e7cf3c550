import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.ts"
import { ApiError } from "../Platform/ApiError.ts"
import { User } from "../Accounts/User.ts"
import { UserRepo, type UserRecord } from "../Accounts/UserRepo.ts"
import { LoginThrottle } from "./LoginThrottle.ts"
import { Passwords } from "./Passwords.ts"
import { refreshTokenHash, TokenStore } from "./TokenStore.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"

const MAX_EMAIL_LENGTH = 320

/** A credential as text; anything else, or text with a NUL (which no stored value has), as "". */
const text = (value: unknown) => (typeof value === "string" && !value.includes("\u0000") ? value : "")

const toUser = (record: UserRecord) => new User({ user_id: record.id, nickname: record.nickname, email: record.email })

export const AuthHttpLive = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function* () {
    const users = yield* UserRepo
    const passwords = yield* Passwords
    const tokens = yield* TokenStore
    const throttle = yield* LoginThrottle

    /** The same 401 for an unknown e-mail, a wrong password and a malformed request (CONTRACT §3). */
    const rejected = (email: string) =>
      new ApiError({ ...ApiError.of(10001, email.slice(0, MAX_EMAIL_LENGTH)), success: 0 })

    const checked = (email: string, found: Effect.Effect<boolean, ApiError>, user: Option.Option<UserRecord>) =>
      Effect.gen(function* () {
        if (!(yield* found) || Option.isNone(user)) {
          yield* throttle.failed(email)
          return yield* rejected(email)
        }
        yield* throttle.succeeded(email)
        return user.value
      })

    const byPassword = (emailInput: unknown, passwordInput: unknown) =>
      Effect.gen(function* () {
        const email = text(emailInput).trim()
        const password = text(passwordInput)
        yield* throttle.wait(email)
        const user =
          email === "" || email.length > MAX_EMAIL_LENGTH ? Option.none<UserRecord>() : yield* users.findByEmail(email)
        const matches = passwords.verify(Option.getOrUndefined(user)?.password_hash, password)
        return yield* checked(email, Effect.map(matches, (ok) => ok && password !== ""), user)
      })

    const byRefreshToken = (emailInput: unknown, tokenInput: unknown) =>
      Effect.gen(function* () {
        const email = text(emailInput).trim()
        const token = text(tokenInput)
        yield* throttle.wait(email)
        const user =
          email === "" || token === "" || token.length > 256
            ? Option.none<UserRecord>()
            : yield* users.findByRefreshToken({ email, hash: refreshTokenHash(token) })
        return yield* checked(email, Effect.succeed(Option.isSome(user)), user)
      })

    return handlers
      .handle("validateLogin", ({ payload }) =>
        byPassword(payload.email, payload.password).pipe(
          Effect.map((user) => ({ success: 1 as const, user: toUser(user) })),
          orDieOnInfrastructure
        )
      )
      .handle("accessToken", ({ payload }) =>
        Effect.gen(function* () {
          const user =
            payload.refresh_token !== undefined && payload.password === undefined
              ? yield* byRefreshToken(payload.email, payload.refresh_token)
              : yield* byPassword(payload.email, payload.password)
          const issued = yield* tokens.issue(user.id)
          return { success: 1 as const, user: toUser(user), access_token: issued.accessToken, expires: issued.expires }
        }).pipe(orDieOnInfrastructure)
      )
  })
)
