import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { User } from "../Accounts/User.ts"
import { ErrorCatalogue } from "../Platform/ErrorCatalogue.ts"
import { answers, answersInvalidInput } from "../Platform/Failure.ts"
import { Authentication } from "./Authentication.ts"
import { InvalidCredentials, LoginsBusy } from "./AuthErrors.ts"
import { BodyTimeout, BodyTooLarge } from "../Platform/ApiError.ts"
import { Invalid, isInvalid, lenient } from "../Platform/Coded.ts"

/**
 * A credential: text, as the OpenAPI document and a derived client say. Anything else a request
 * holds there (a number, an object, null, nothing where one is required, or text with a NUL, which
 * no stored value has and PostgreSQL text cannot hold) decodes to an `Invalid` with 10001: the
 * handlers read it as a login that matches no user, so any bad login is the same 401, whatever was wrong.
 */
const Credential = lenient(10001, Schema.String.pipe(Schema.filter((text) => !text.includes("\u0000"))))

const required = Schema.optionalWith(Credential, { exact: true, default: () => Invalid.of(10001) })
const optional = Schema.optionalWith(Credential, { exact: true })

const Credentials = Schema.Struct({ email: required, password: required }).annotations({
  jsonSchema: { required: ["email", "password"] }
})

/** A credential as the use case takes it: one of another type is text that matches no user. */
export const credentialText = (value: string | Invalid): string => (isInvalid(value) ? "" : value)

/** E2 takes a password, or a refresh token in its place. */
const TokenRequest = Schema.Struct({ email: required, password: optional, refresh_token: optional }).annotations({
  jsonSchema: { required: ["email"] }
})

/**
 * `InvalidCredentials` as E1 and E2 answer it: its body also carries `success: 0`, like the real
 * API's, which `answers` does not write; the handlers hand the edge an `ApiError` that does.
 */
const RefusedLogin = Schema.transform(
  Schema.Struct({
    success: Schema.Literal(0),
    errors: Schema.Tuple(Schema.Struct({ code: Schema.Literal(InvalidCredentials.code), message: Schema.String }))
  }),
  Schema.typeSchema(InvalidCredentials),
  {
    strict: true,
    decode: (wire) => new InvalidCredentials({ message: wire.errors[0].message }),
    encode: (failure) => ({ success: 0 as const, errors: [{ code: InvalidCredentials.code, message: failure.message }] as const })
  }
).annotations(HttpApiSchema.annotations({ status: 401, description: `10001: ${ErrorCatalogue[10001].description}` }))

export class LoginResponse extends Schema.Class<LoginResponse>("LoginResponse")({
  success: Schema.Literal(1),
  user: User
}) {}

export class AccessTokenResponse extends Schema.Class<AccessTokenResponse>("AccessTokenResponse")({
  success: Schema.Literal(1),
  user: User,
  access_token: Schema.String,
  expires: Schema.Int
}) {}

export class TokenRevoked extends Schema.Class<TokenRevoked>("TokenRevoked")({
  success: Schema.Literal(1)
}) {}

export class AuthApi extends HttpApiGroup.make("auth")
  .annotate(OpenApi.Description, "Logins (E1, E2) and signing out")
  .add(
    HttpApiEndpoint.post("validateLogin", "/validate_login")
      .setPayload(Credentials)
      .addError(BodyTooLarge)
      .addError(BodyTimeout)
      .addSuccess(LoginResponse)
      .addError(RefusedLogin)
      .addError(answers(LoginsBusy))
      .addError(answersInvalidInput(10153))
      .annotate(OpenApi.Summary, "E1 Validate login").annotate(OpenApi.Description, "E1: check an e-mail and password without issuing a token")
  )
  .add(
    HttpApiEndpoint.post("accessToken", "/access_token")
      .setPayload(TokenRequest)
      .addError(BodyTooLarge)
      .addError(BodyTimeout)
      .addSuccess(AccessTokenResponse)
      .addError(RefusedLogin)
      .addError(answers(LoginsBusy))
      .addError(answersInvalidInput(10153))
      .annotate(OpenApi.Summary, "E2 Get an access token").annotate(OpenApi.Description, "E2: the caller's valid access token, or a new one, for a password or refresh token")
  )
  .add(
    HttpApiEndpoint.del("revokeAccessToken", "/access_token")
      .addSuccess(TokenRevoked)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Revoke the access token (sign out)").annotate(
        OpenApi.Description,
        "Revokes the access token presented (an extension of the API): it stops working on every instance; the user's other tokens still work, and E2 issues a new one"
      )
  ) {}
