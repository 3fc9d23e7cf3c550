import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { User } from "../Accounts/User.ts"

/** Type checks of credentials happen in the handler: any bad login is the same 401 (CONTRACT §3). */
const Credentials = Schema.Struct({
  email: Schema.optional(Schema.Unknown),
  password: Schema.optional(Schema.Unknown)
})

const TokenRequest = Schema.Struct({
  email: Schema.optional(Schema.Unknown),
  password: Schema.optional(Schema.Unknown),
  refresh_token: Schema.optional(Schema.Unknown)
})

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

export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("validateLogin", "/validate_login")
      .setPayload(Credentials)
      .addSuccess(LoginResponse)
      .annotate(OpenApi.Description, "E1: check an e-mail and password without issuing a token")
  )
  .add(
    HttpApiEndpoint.post("accessToken", "/access_token")
      .setPayload(TokenRequest)
      .addSuccess(AccessTokenResponse)
      .annotate(OpenApi.Description, "E2: the caller's valid access token, or a new one, for a password or refresh token")
  ) {}
