import { Schema } from "effect"
import { Role } from "./User.ts"
import { Unset } from "../Platform/Unset.ts"

/** A domain of the account as U1 shows it for one user: `domain_admin` when they administer it. */
export class UserDomain extends Schema.Class<UserDomain>("UserDomain")({
  id: Schema.Int,
  name: Schema.String,
  role: Schema.Literal("domain_admin", "member")
}) {}

/** A user of the account as U1 lists it; unset names are left out. */
export class AccountUser extends Schema.Class<AccountUser>("AccountUser")({
  user_id: Schema.Int,
  first_name: Unset(Schema.String),
  last_name: Unset(Schema.String),
  email_address: Schema.String,
  nickname: Schema.String,
  role: Role,
  domains: Schema.Array(UserDomain)
}) {}
