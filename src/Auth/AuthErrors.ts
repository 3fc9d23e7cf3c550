import { Schema } from "effect"
import { Failure } from "../Platform/Failure.ts"

/**
 * E1, E2: the e-mail and the password or refresh token do not match a user, for whatever reason
 * (unknown e-mail, wrong or missing password, a malformed request), so that the answer tells nothing.
 * On the wire its body also carries `success: 0` (`AuthHttp.ts`).
 */
export class InvalidCredentials extends Failure("InvalidCredentials", 10001) {}

/** A bearer token that is missing, malformed, unknown or expired. */
export class InvalidToken extends Failure("InvalidToken", 10000) {}

/** Too many password hashes are waiting for a thread: refused at once rather than queued. */
export class LoginsBusy extends Failure("LoginsBusy", 10901) {}

/** No user has this e-mail address (an operator's request; the API never says so). */
export class UnknownUser extends Schema.TaggedError<UnknownUser>()("UnknownUser", { email: Schema.String }) {
  override get message(): string {
    return `there is no user with the e-mail ${this.email}`
  }
}

/** A new password the account rules refuse (an operator's request), with the rule it breaks. */
export class WeakPassword extends Schema.TaggedError<WeakPassword>()("WeakPassword", { message: Schema.String }) {}

/** The token secret comes from `TOKEN_SECRET`, which only the operator's environment can change. */
export class SecretFromEnvironment extends Schema.TaggedError<SecretFromEnvironment>()("SecretFromEnvironment", { message: Schema.String }) {}
