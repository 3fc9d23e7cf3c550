import { Schema } from "effect"

export const Plan = Schema.Literal("free", "team", "business", "enterprise")
export type Plan = typeof Plan.Type

export const Role = Schema.Literal("account_admin", "member")
export type Role = typeof Role.Type

/** The user as login and token answers show it. */
export class User extends Schema.Class<User>("User")({
  user_id: Schema.Int,
  nickname: Schema.String,
  email: Schema.String
}) {}

/** The authenticated caller of a request. */
export interface Caller {
  readonly userId: number
  readonly accountId: number
  readonly email: string
  readonly nickname: string
  readonly role: Role
  readonly plan: Plan
  /** The account's link quota; null is unlimited. */
  readonly linkQuota: number | null
}
