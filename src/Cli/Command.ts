import { Data } from "effect"
import type { UtmField } from "../Tags/UtmTemplate.ts"
import type { Plan, Role } from "../Accounts/User.ts"
import type { UserRef } from "../Accounts/Accounts.ts"
import type { ImportOptions } from "../Import/Importer.ts"
import type { WebhookEvent } from "../Webhooks/Webhook.ts"

/** A command of the admin CLI with its arguments checked (README "Admin CLI"). */
/** Where a new password comes from: the command line, one line of stdin, or a prompt on the terminal. */
export type PasswordSource =
  | { readonly _tag: "Given"; readonly password: string }
  | { readonly _tag: "Stdin" }
  | { readonly _tag: "Prompt" }

/** Rows a page of a list command shows, as the API's version 4 lists. */
export const PAGE_SIZE = 50

/** Rows of a file `import` commits in one transaction unless `--batch-size` says otherwise. */
export const DEFAULT_IMPORT_BATCH = 1000

export type Command = Data.TaggedEnum<{
  Help: { readonly command: string | undefined }
  Version: {}
  AccountCreate: { readonly name: string; readonly plan: Plan; readonly linkQuota: number | null }
  UserCreate: {
    readonly accountId: number
    readonly email: string
    readonly password: PasswordSource
    readonly nickname: string | undefined
    readonly firstName: string | undefined
    readonly lastName: string | undefined
    readonly role: Role
  }
  UserRefreshToken: { readonly email: string }
  UserDisable: { readonly email: string }
  UserEnable: { readonly email: string }
  UserPassword: { readonly email: string; readonly password: PasswordSource }
  UserRevokeTokens: { readonly email: string }
  UserDelete: { readonly email: string; readonly reassignTo: UserRef | undefined }
  UserList: { readonly accountId: number | null; readonly page: number }
  UserShow: { readonly email: string }
  AccountList: { readonly page: number }
  AccountShow: { readonly accountId: number }
  DomainList: { readonly accountId: number | null; readonly page: number }
  DomainShow: { readonly domainId: number }
  LinkList: { readonly domainId: number; readonly page: number }
  LinkShow: { readonly linkId: number }
  LinkSettings: { readonly linkId: number }
  LinkSetSettings: { readonly linkId: number; readonly file: string }
  TokenSecretRotate: {}
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
  ExportLinks: { readonly domainId: number; readonly output: string | undefined }
  ExportClicks: {
    readonly domainId: number
    readonly from: number
    readonly to: number
    readonly linkId: number | undefined
    readonly output: string | undefined
  }
  WebhookList: { readonly domainId: number }
  WebhookCreate: { readonly domainId: number; readonly url: string; readonly events: ReadonlyArray<WebhookEvent> }
  WebhookDelete: { readonly webhookId: number }
  WebhookRotateSecret: { readonly webhookId: number }
  WebhookDeliveries: { readonly webhookId: number; readonly page: number }
  WebhookReplay: { readonly deliveryId: number }
  Migrate: {}
  Import: ImportOptions & { readonly json: boolean }
}>

export const Command = Data.taggedEnum<Command>()

/** The command line is wrong: nothing was done. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** The list and show commands, which read through `Operations/Inventory.ts` alone. */
export const INVENTORY_COMMANDS = ["AccountList", "AccountShow", "UserList", "UserShow", "DomainList", "DomainShow", "LinkList", "LinkShow"] as const

export type InventoryCommand = Extract<Command, { readonly _tag: (typeof INVENTORY_COMMANDS)[number] }>
