import { Data } from "effect"
import type { UtmField } from "../Tags/UtmTemplate.ts"
import type { Plan, Role } from "../Accounts/User.ts"

/** A command of the admin CLI with its arguments checked (README "Admin CLI"). */
export type Command = Data.TaggedEnum<{
  Help: {}
  AccountCreate: { readonly name: string; readonly plan: Plan; readonly linkQuota: number | null }
  UserCreate: {
    readonly accountId: number
    readonly email: string
    readonly password: string
    readonly nickname: string | undefined
    readonly firstName: string | undefined
    readonly lastName: string | undefined
    readonly role: Role
  }
  UserRefreshToken: { readonly email: string }
  UserDisable: { readonly email: string }
  UserEnable: { readonly email: string }
  UserPassword: { readonly email: string; readonly password: string }
  DomainAdmin: { readonly userId: number; readonly domainId: number }
  DomainSsl: { readonly domainId: number; readonly hasSsl: boolean }
  UtmTemplateCreate: { readonly domainId: number; readonly name: string; readonly fields: ReadonlyArray<UtmField> }
  GroupCreate: {
    readonly domainId: number
    readonly name: string
    readonly global: boolean
    readonly owner: number | undefined
    readonly users: ReadonlyArray<number>
  }
  GroupAddLink: { readonly groupId: number; readonly linkId: number }
  GroupAddUser: { readonly groupId: number; readonly userId: number }
  GroupList: { readonly domainId: number }
  Migrate: {}
}>

export const Command = Data.taggedEnum<Command>()

/** The command line is wrong: nothing was done. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}
