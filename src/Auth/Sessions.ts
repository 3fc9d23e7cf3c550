import { Effect, Option } from "effect"
import { User } from "../Accounts/User.ts"
import { UserRepo, type UserRecord } from "../Accounts/UserRepo.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { InvalidCredentials, type LoginsBusy, UnknownUser } from "./AuthErrors.ts"
import { LoginThrottle } from "./LoginThrottle.ts"
import { Passwords } from "./Passwords.ts"
import { newRefreshToken, refreshTokenHash, TokenStore } from "./TokenStore.ts"

const MAX_EMAIL_LENGTH = 320
const MAX_REFRESH_TOKEN_LENGTH = 256

/** E2's request: a password, or a refresh token in its place. */
export interface TokenRequest {
  readonly email: string
  readonly password?: string | undefined
  readonly refreshToken?: string | undefined
}

export interface Session {
  readonly user: User
  readonly accessToken: string
  /** Unix seconds. */
  readonly expires: number
}

const toUser = (record: UserRecord) => new User({ user_id: record.id, nickname: record.nickname, email: record.email })

/**
 * Logins (E1, E2) and the credentials behind them. An unknown e-mail, a wrong password or refresh
 * token and an empty one are the same `InvalidCredentials`, found in about the same time (an unknown
 * e-mail still verifies a hash), and repeated failures on one e-mail wait longer and longer.
 */
export class Sessions extends Effect.Service<Sessions>()("Sessions", {
  effect: Effect.gen(function* () {
    const users = yield* UserRepo
    const passwords = yield* Passwords
    const tokens = yield* TokenStore
    const throttle = yield* LoginThrottle

    const checked = (email: string, found: Effect.Effect<boolean, LoginsBusy>, user: Option.Option<UserRecord>) =>
      Effect.gen(function* () {
        if (!(yield* found) || Option.isNone(user)) {
          yield* throttle.failed(email)
          return yield* InvalidCredentials.of(email.slice(0, MAX_EMAIL_LENGTH))
        }
        yield* throttle.succeeded(email)
        return user.value
      })

    const byPassword = (emailInput: string, password: string) =>
      Effect.gen(function* () {
        const email = emailInput.trim()
        yield* throttle.wait(email)
        const user =
          email === "" || email.length > MAX_EMAIL_LENGTH ? Option.none<UserRecord>() : yield* users.findByEmail(email)
        const matches = passwords.verify(Option.getOrUndefined(user)?.password_hash, password)
        return yield* checked(email, Effect.map(matches, (ok) => ok && password !== ""), user)
      })

    const byRefreshToken = (emailInput: string, token: string) =>
      Effect.gen(function* () {
        const email = emailInput.trim()
        yield* throttle.wait(email)
        const user =
          email === "" || token === "" || token.length > MAX_REFRESH_TOKEN_LENGTH
            ? Option.none<UserRecord>()
            : yield* users.findByRefreshToken({ email, hash: refreshTokenHash(token) })
        return yield* checked(email, Effect.succeed(Option.isSome(user)), user)
      })

    /** E1: the user of an e-mail and password, without a token. */
    const validateLogin = (email: string, password: string): Effect.Effect<User, InvalidCredentials | LoginsBusy> =>
      byPassword(email, password).pipe(Effect.map(toUser), orDieOnInfrastructure)

    /** E2: the user's unexpired access token, or a new one valid 24 hours; a refresh token counts only without a password. */
    const accessToken = (request: TokenRequest): Effect.Effect<Session, InvalidCredentials | LoginsBusy> =>
      Effect.gen(function* () {
        const user = yield* (request.refreshToken !== undefined && request.password === undefined
          ? byRefreshToken(request.email, request.refreshToken)
          : byPassword(request.email, request.password ?? ""))
        const issued = yield* tokens.issue(user.id)
        return { user: toUser(user), accessToken: issued.accessToken, expires: issued.expires }
      }).pipe(orDieOnInfrastructure)

    /**
     * The operator's: a new refresh token for the user (shown once); the old one stops working on E2.
     * Database failures stay failures, which the admin CLI reports in one line.
     */
    const rotateRefreshToken = (email: string) =>
      Effect.gen(function* () {
        const refresh = newRefreshToken()
        const updated = yield* users.setRefreshToken({ email: email.trim(), hash: refresh.hash })
        if (Option.isNone(updated)) return yield* new UnknownUser({ email })
        return { refresh_token: refresh.value }
      })

    return { validateLogin, accessToken, rotateRefreshToken } as const
  }),
  dependencies: [UserRepo.Default, TokenStore.Default, LoginThrottle.Default, Passwords.layer]
}) {}
