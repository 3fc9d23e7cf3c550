import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { User } from "../Accounts/User.ts"
import { UserRepo, type UserRecord } from "../Accounts/UserRepo.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { InvalidCredentials, type LoginsBusy, SecretFromEnvironment, UnknownUser, WeakPassword } from "./AuthErrors.ts"
import { LoginThrottle } from "./LoginThrottle.ts"
import { Passwords } from "./Passwords.ts"
import { passwordProblem } from "./PasswordRules.ts"
import { newRefreshToken, refreshTokenHash, replaceTokenSecret, TokenStore } from "./TokenStore.ts"
import { AppConfig } from "../Config.ts"

const MAX_EMAIL_LENGTH = 320
const MAX_REFRESH_TOKEN_LENGTH = 256

/** The e-mail as 10001's "%1$s may not be registered" names it: one left out or empty is said so. */
const shownEmail = (email: string) => (email === "" ? "an empty e-mail" : email.slice(0, MAX_EMAIL_LENGTH))

/** E2's request: a password, or a refresh token in its place. */
export interface TokenRequest {
  readonly email: string
  readonly password?: string | undefined
  readonly refreshToken?: string | undefined
  /** The client's network (`ClientIp.clientNetwork`; "local" when not given): failures are counted and hashing shared by it. */
  readonly network?: string | undefined
}

export interface Session {
  readonly user: User
  readonly accessToken: string
  /** Unix seconds. */
  readonly expires: number
}

interface ChangedUser {
  readonly id: number
  readonly email: string
}

const toUser = (record: UserRecord) => new User({ user_id: record.id, nickname: record.nickname, email: record.email })

/**
 * Logins (E1, E2) and the credentials behind them. An unknown e-mail, a wrong password or refresh
 * token, an empty one and a disabled user are the same `InvalidCredentials`, found in about the same
 * time (an unknown e-mail still verifies a hash), and repeated failures on one e-mail wait longer and
 * longer. A user has one refresh token; rotating it, changing the password or disabling the user
 * deletes every access token of theirs in the same transaction.
 */
export class Sessions extends Effect.Service<Sessions>()("Sessions", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const users = yield* UserRepo
    const passwords = yield* Passwords
    const tokens = yield* TokenStore
    const throttle = yield* LoginThrottle
    const config = yield* AppConfig

    /** The user, when the credentials `judged` for the e-mail match one that is not disabled; judged by the throttle. */
    const checked = <E, R>(
      emailInput: string,
      network: string,
      judged: (email: string) => Effect.Effect<readonly [boolean, Option.Option<UserRecord>], E, R>
    ) => {
      const email = emailInput.trim()
      return throttle.judge(
        email,
        network,
        Effect.gen(function* () {
          const [found, user] = yield* judged(email)
          if (!found || Option.isNone(user) || user.value.disabled) return yield* InvalidCredentials.of(shownEmail(email))
          return user.value
        }),
        (failure) => failure instanceof InvalidCredentials
      )
    }

    const byPassword = (emailInput: string, password: string, network: string) =>
      checked(emailInput, network, (email) =>
        Effect.gen(function* () {
          const user = email === "" || email.length > MAX_EMAIL_LENGTH ? Option.none<UserRecord>() : yield* users.findByEmail(email)
          const matches = yield* passwords.verify(Option.getOrUndefined(user)?.password_hash, password, network)
          return [matches && password !== "", user] as const
        })
      )

    const byRefreshToken = (emailInput: string, token: string, network: string) =>
      checked(emailInput, network, (email) =>
        Effect.map(
          email === "" || token === "" || token.length > MAX_REFRESH_TOKEN_LENGTH
            ? Effect.succeed(Option.none<UserRecord>())
            : users.findByRefreshToken({ email, hash: refreshTokenHash(token) }),
          (user) => [Option.isSome(user), user] as const
        )
      )

    /** E1: the user of an e-mail and password, without a token, for a client of `network`. */
    const validateLogin = (email: string, password: string, network = "local"): Effect.Effect<User, InvalidCredentials | LoginsBusy> =>
      byPassword(email, password, network).pipe(Effect.map(toUser), orDieOnInfrastructure)

    /** E2: the user's unexpired access token, or a new one valid 24 hours; a refresh token counts only without a password. */
    const accessToken = (request: TokenRequest): Effect.Effect<Session, InvalidCredentials | LoginsBusy> =>
      Effect.gen(function* () {
        const user = yield* (request.refreshToken !== undefined && request.password === undefined
          ? byRefreshToken(request.email, request.refreshToken, request.network ?? "local")
          : byPassword(request.email, request.password ?? "", request.network ?? "local"))
        const issued = yield* tokens.issue(user)
        // The password or refresh token changed, or the user was disabled, since they were checked.
        if (Option.isNone(issued)) return yield* InvalidCredentials.of(shownEmail(request.email.trim()))
        return { user: toUser(user), accessToken: issued.value.accessToken, expires: issued.value.expires }
      }).pipe(orDieOnInfrastructure)

    /** The caller's sign-out: the access token stored under `tokenHash` stops working, the user's others do not. */
    const revokeAccessToken = (tokenHash: Uint8Array): Effect.Effect<void> => tokens.revoke(tokenHash).pipe(orDieOnInfrastructure)

    /** The user an operator's `change` reached, or `UnknownUser`. */
    const changed = <E>(email: string, change: Effect.Effect<Option.Option<ChangedUser>, E>) =>
      Effect.flatMap(change, (user) => (Option.isSome(user) ? Effect.succeed(user.value) : new UnknownUser({ email })))

    /** `change` of the user of `email`, and the deletion of all their access tokens, in one transaction. */
    const revokingTokens = <E>(email: string, change: Effect.Effect<Option.Option<ChangedUser>, E>) =>
      sql.withTransaction(Effect.tap(changed(email, change), (user) => tokens.revokeAll(user.id)))

    const disabledState = (disabled: boolean) => (user: ChangedUser) => ({ user_id: user.id, email: user.email, disabled })

    /**
     * The operator's: a new refresh token for the user (shown once); the old one stops working on E2,
     * and so do the user's access tokens. Database failures of the operator's methods stay failures,
     * which the admin CLI reports in one line.
     */
    const rotateRefreshToken = (email: string) => {
      const refresh = newRefreshToken()
      return revokingTokens(email, users.setRefreshToken({ email: email.trim(), hash: refresh.hash })).pipe(
        Effect.as({ refresh_token: refresh.value })
      )
    }

    /** The operator's: the user can no longer log in, and their access tokens stop working. */
    const disable = (email: string) =>
      Effect.map(revokingTokens(email, users.setDisabled({ email: email.trim(), disabled: true })), disabledState(true))

    /** The operator's: a disabled user can log in again (E2 issues them a new token). */
    const enable = (email: string) =>
      Effect.map(changed(email, users.setDisabled({ email: email.trim(), disabled: false })), disabledState(false))

    /** The operator's: a new password, checked by the account rules; the user's access tokens stop working. */
    const changePassword = (email: string, password: string) =>
      Effect.gen(function* () {
        const user = yield* users.findByEmail(email.trim())
        if (Option.isNone(user)) return yield* new UnknownUser({ email })
        const problem = passwordProblem(password, user.value.email)
        if (problem !== undefined) return yield* new WeakPassword({ message: problem })
        const hash = yield* passwords.hash(password)
        const done = yield* revokingTokens(email, users.setPassword({ id: user.value.id, hash }))
        return { user_id: done.id, email: done.email }
      })

    /** The operator's: every access token of the user stops working; the password and refresh token stay. */
    const revokeTokens = (email: string) =>
      revokingTokens(email, Effect.map(users.findByEmail(email.trim()), Option.map((user) => ({ id: user.id, email: user.email })))).pipe(
        Effect.map((user) => ({ user_id: user.id, email: user.email }))
      )

    /**
     * The operator's: a new token secret in `DATA_DIR` (instances reading that file take it at their next
     * login), and every access token deleted, since the old secret and a copy of the database together
     * rebuild them. Refused when `TOKEN_SECRET` sets the secret.
     */
    const rotateTokenSecret = Effect.gen(function* () {
      if (Option.isSome(config.tokenSecret)) {
        return yield* new SecretFromEnvironment({
          message: "TOKEN_SECRET sets the token secret: give every instance a new value and restart them (their access tokens stop working)"
        })
      }
      const file = replaceTokenSecret(config.dataDir)
      return { file, revoked_access_tokens: yield* tokens.revokeEveryone }
    })

    return { validateLogin, accessToken, revokeAccessToken, rotateRefreshToken, disable, enable, changePassword, revokeTokens, rotateTokenSecret } as const
  }),
  dependencies: [UserRepo.Default, TokenStore.Default, LoginThrottle.Default, Passwords.layer]
}) {}
