import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { Plan, Role } from "./User.ts"
import { AccountRepo } from "./AccountRepo.ts"
import { DomainRepo } from "../Domains/DomainRepo.ts"
import { type UserRecord, UserRepo } from "./UserRepo.ts"
import { Passwords } from "../Auth/Passwords.ts"
import { passwordProblem } from "../Auth/PasswordRules.ts"
import { AdminError } from "./AdminError.ts"
import { emailProblem } from "./EmailAddress.ts"
import { newRefreshToken } from "../Auth/TokenStore.ts"
import { violatesUniqueIndex } from "../Sql/Constraints.ts"



/** A user named by id or by e-mail. */
export type UserRef = { readonly id: number } | { readonly email: string }

export interface NewUser {
  readonly accountId: number
  readonly email: string
  readonly password: string
  readonly nickname?: string | undefined
  readonly firstName?: string | undefined
  readonly lastName?: string | undefined
  readonly role: Role
}

/** The administrative operations of the CLI and of the first start. */
export class Accounts extends Effect.Service<Accounts>()("Accounts", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* AccountRepo
    const users = yield* UserRepo
    const domains = yield* DomainRepo
    const passwords = yield* Passwords

    const createAccount = (input: { name: string; plan: Plan; linkQuota: number | null }) =>
      Effect.gen(function* () {
        const name = input.name.trim()
        if (name === "" || name.length > 200) return yield* new AdminError({ message: "the account name must have 1 to 200 characters" })
        if (input.linkQuota !== null && (!Number.isInteger(input.linkQuota) || input.linkQuota < 0)) {
          return yield* new AdminError({ message: "the link quota must be a whole number, 0 or more" })
        }
        return yield* accounts.create({ name, plan: input.plan, link_quota: input.linkQuota })
      })

    const createUser = (input: NewUser) =>
      Effect.gen(function* () {
        const email = input.email.trim()
        const problem = emailProblem(email) ?? passwordProblem(input.password, email)
        if (problem !== undefined) return yield* new AdminError({ message: problem })
        if (Option.isNone(yield* accounts.findById(input.accountId))) {
          return yield* new AdminError({ message: `there is no account ${input.accountId}` })
        }
        if (Option.isSome(yield* users.findByEmail(email))) {
          return yield* new AdminError({ message: `a user with the e-mail ${email} already exists` })
        }
        const nickname = (input.nickname ?? email.split("@")[0]!).trim().slice(0, 100)
        const passwordHash = yield* passwords.hash(input.password)
        const refresh = newRefreshToken()
        const created = yield* users
          .create({
            account_id: input.accountId,
            email,
            nickname,
            role: input.role,
            first_name: input.firstName ?? null,
            last_name: input.lastName ?? null,
            password_hash: passwordHash,
            refresh_token_hash: refresh.hash
          })
          .pipe(
            Effect.mapError((error) =>
              error._tag === "SqlError" && violatesUniqueIndex(error, "users_email")
                ? new AdminError({ message: `a user with the e-mail ${email} already exists` })
                : error
            )
          )
        const names = { ...(input.firstName === undefined ? {} : { first_name: input.firstName }), ...(input.lastName === undefined ? {} : { last_name: input.lastName }) }
        return { user_id: created.id, email, nickname, ...names, role: input.role, refresh_token: refresh.value }
      })

    const makeDomainAdmin = (userId: number, domainId: number) =>
      Effect.gen(function* () {
        if (!(yield* domains.addAdmin(userId, domainId))) {
          return yield* new AdminError({
            message: `user ${userId} or domain ${domainId} does not exist, or they belong to different accounts`
          })
        }
        return { user_id: userId, domain_id: domainId }
      })

    const setSsl = (domainId: number, hasSsl: boolean) =>
      Effect.gen(function* () {
        if (!(yield* domains.setSsl(domainId, hasSsl))) return yield* new AdminError({ message: `there is no domain ${domainId}` })
        return { domain_id: domainId, has_ssl: hasSsl }
      })

    /**
     * On a database with no user: an enterprise account and its admin. Serialised by an advisory lock
     * so that instances starting together create one.
     */
    const bootstrap = (email: string, password: string) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`SELECT pg_advisory_xact_lock(7243092)`
          if ((yield* users.count) > 0) return Option.none()
          const account = yield* createAccount({ name: "Default", plan: "enterprise", linkQuota: null })
          const user = yield* createUser({ accountId: account.id, email, password, nickname: "admin", role: "account_admin" })
          return Option.some({ account, user })
        })
      )

    /** The user `ref` names, locked with `user` (the one to delete) until the transaction ends, and as they are now. */
    const lockedPair = (user: UserRecord, ref: UserRef) =>
      Effect.gen(function* () {
        const found = "id" in ref ? yield* users.findById(ref.id) : yield* users.findByEmail(ref.email.trim())
        if (Option.isNone(found)) {
          return yield* new AdminError({ message: "id" in ref ? `there is no user ${ref.id}` : `there is no user with the e-mail ${ref.email.trim()}` })
        }
        if (found.value.id === user.id) return yield* new AdminError({ message: `--reassign-to names user ${user.id} ${user.email}, the one being deleted` })
        const rows = yield* users.lock([user.id, found.value.id])
        const heir = rows.find((row) => row.id === found.value.id)
        if (heir === undefined || !rows.some((row) => row.id === user.id)) return yield* new AdminError({ message: "the user was deleted meanwhile" })
        return heir
      })

    /**
     * Deletes a user. One who owns links, tags or groups is refused (`user disable` keeps them), unless
     * `reassignTo` names an enabled user of the same account, who gets them in the same transaction.
     */
    const deleteUser = (email: string, reassignTo?: UserRef) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const found = yield* users.findByEmail(email.trim())
          if (Option.isNone(found)) return yield* new AdminError({ message: `there is no user with the e-mail ${email.trim()}` })
          const user = found.value
          if (reassignTo === undefined) {
            yield* users.lock([user.id])
            const { groups, links, tags } = yield* users.owned(user.id)
            if (links + tags + groups > 0) {
              return yield* new AdminError({
                message: `user ${user.id} ${user.email} owns ${links} link(s), ${tags} tag(s) and ${groups} group(s), which keep them: disable them instead (user disable), or hand them to another user (--reassign-to)`
              })
            }
            yield* users.remove(user.id)
            return { user_id: user.id, email: user.email, deleted: true }
          }
          const heir = yield* lockedPair(user, reassignTo)
          if (heir.account_id !== user.account_id) {
            return yield* new AdminError({
              message: `user ${heir.id} ${heir.email} is of account ${heir.account_id}, not of account ${user.account_id} of user ${user.id} ${user.email}`
            })
          }
          if (heir.disabled) {
            return yield* new AdminError({ message: `user ${heir.id} ${heir.email} is disabled: enable them first (user enable), or choose another user` })
          }
          const moved = yield* users.handOver(user.id, heir.id)
          yield* users.remove(user.id)
          return { user_id: user.id, email: user.email, deleted: true, reassigned_to: heir.id, ...moved }
        })
      )

    return { createAccount, createUser, makeDomainAdmin, setSsl, bootstrap, deleteUser } as const
  })
}) {}
