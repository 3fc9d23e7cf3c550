import { Effect, Match } from "effect"
import { coreLayer } from "../App.ts"
import { Tags } from "../Tags/Tags.ts"
import type { Group } from "../Groups/Group.ts"
import { Groups } from "../Groups/Groups.ts"
import { Accounts, AdminError } from "../Accounts/Accounts.ts"
import { type LoginsBusy, UnknownUser, WeakPassword } from "../Auth/AuthErrors.ts"
import { Sessions } from "../Auth/Sessions.ts"
import { DatabaseLive } from "../Sql/Database.ts"
import { migrate } from "../Sql/Migrator.ts"
import type { Command } from "./Command.ts"
import type { Outcome } from "./Outcome.ts"

/** The services of the API over the configured database, migrated. */
const servicesLayer = coreLayer(DatabaseLive)

const withServices = <A, E>(effect: Effect.Effect<A, E, Accounts | Sessions | Tags | Groups>) => Effect.provide(effect, servicesLayer)

const withAccounts = <A, E>(f: (accounts: Accounts) => Effect.Effect<A, E, never>) => withServices(Effect.flatMap(Accounts, f))

/** The hashing queue is full: said as the API's error is, code first. */
const busy = (failure: LoginsBusy) => new AdminError({ message: `${failure.code} ${failure.message}` })

const quota = (linkQuota: number | null) => (linkQuota === null ? "unlimited links" : `at most ${linkQuota} links`)

/** A Sessions operation of the operator's, an unknown e-mail or a refused password said in one line. */
const withSessions = <A, E>(f: (sessions: Sessions) => Effect.Effect<A, E, never>) =>
  Effect.catchIf(
    withServices(Effect.flatMap(Sessions, f)),
    (failure) => failure instanceof UnknownUser || failure instanceof WeakPassword,
    (failure) => new AdminError({ message: failure.message })
  )

const withGroups = <A, E>(f: (groups: Groups) => Effect.Effect<A, E, never>) => withServices(Effect.flatMap(Groups, f))

/** A group as `--json` shows it: the fields of the API's group object. */
const groupJson = (group: Group) => ({
  id: group.id,
  name: group.name,
  domain_id: group.domain_id,
  user_id: group.user_id,
  is_global: group.is_global,
  users: group.users,
  created: group.created,
  modified: group.modified
})

const groupLine = (group: Group) => {
  const seenBy = group.is_global === "1" ? "global" : group.users.length === 0 ? "private" : `users ${group.users.join(", ")}`
  return `${group.id} "${group.name}" (owner user ${group.user_id}, ${seenBy})`
}

/** A command that needs the database; loaded only then, since it brings the whole service in. */
export type DatabaseCommand = Exclude<Command, { readonly _tag: "Help" }>

export const execute = (command: DatabaseCommand) =>
  Match.valueTags(command, {
    Migrate: () =>
      migrate.pipe(
        Effect.provide(DatabaseLive),
        Effect.map(
          (applied): Outcome => ({
            json: { applied },
            text: applied.length === 0 ? "the database schema is up to date" : `applied migrations ${applied.join(", ")}`
          })
        )
      ),

    AccountCreate: ({ linkQuota, name, plan }) =>
      withAccounts((accounts) => accounts.createAccount({ name, plan, linkQuota })).pipe(
        Effect.map(
          (account): Outcome => ({
            json: { id: account.id, name: account.name, plan: account.plan, link_quota: account.link_quota },
            text: `created account ${account.id} "${account.name}" (plan ${account.plan}, ${quota(account.link_quota)})`
          })
        )
      ),

    UserCreate: (input) =>
      withAccounts((accounts) => accounts.createUser(input)).pipe(
        Effect.catchTag("LoginsBusy", busy),
        Effect.map(
          (user): Outcome => ({
            json: user,
            text:
              `created user ${user.user_id} ${user.email} (${user.role}, nickname "${user.nickname}"); ` +
              `refresh token, shown once: ${user.refresh_token}`
          })
        )
      ),

    UserRefreshToken: ({ email }) =>
      withSessions((sessions) => sessions.rotateRefreshToken(email)).pipe(
        Effect.map(
          (rotated): Outcome => ({
            json: rotated,
            text: `new refresh token of ${email}, shown once (the old one and every access token no longer work): ${rotated.refresh_token}`
          })
        )
      ),

    UserDisable: ({ email }) =>
      withSessions((sessions) => sessions.disable(email)).pipe(
        Effect.map((user): Outcome => ({ json: user, text: `user ${user.user_id} ${user.email} is disabled; their access tokens no longer work` }))
      ),

    UserEnable: ({ email }) =>
      withSessions((sessions) => sessions.enable(email)).pipe(
        Effect.map((user): Outcome => ({ json: user, text: `user ${user.user_id} ${user.email} can log in` }))
      ),

    UserPassword: ({ email, password }) =>
      withSessions((sessions) => sessions.changePassword(email, password)).pipe(
        Effect.catchTag("LoginsBusy", busy),
        Effect.map(
          (user): Outcome => ({ json: user, text: `new password of user ${user.user_id} ${user.email}; their access tokens no longer work` })
        )
      ),

    DomainAdmin: ({ domainId, userId }) =>
      withAccounts((accounts) => accounts.makeDomainAdmin(userId, domainId)).pipe(
        Effect.map((done): Outcome => ({ json: done, text: `user ${userId} is an admin of domain ${domainId}` }))
      ),

    DomainSsl: ({ domainId, hasSsl }) =>
      withAccounts((accounts) => accounts.setSsl(domainId, hasSsl)).pipe(
        Effect.map(
          (done): Outcome => ({
            json: done,
            text: `short links of domain ${domainId} now start with ${hasSsl ? "https" : "http"}://`
          })
        )
      ),

    UtmTemplateCreate: ({ domainId, fields, name }) =>
      withServices(Effect.flatMap(Tags, (tags) => tags.createUtmTemplate(domainId, name, fields))).pipe(
        Effect.catchTag("UtmTemplateDomainNotFound", () => new AdminError({ message: `there is no domain ${domainId}` })),
        Effect.map(
          (template): Outcome => ({
            json: { id: template.id, name: template.name, fields: template.fields },
            text: `created UTM template ${template.id} "${template.name}" with ${template.fields.length} field(s) on domain ${domainId}`
          })
        )
      ),

    GroupCreate: (input) =>
      withGroups((groups) => groups.create(input)).pipe(
        Effect.map((group): Outcome => ({ json: groupJson(group), text: `created group ${groupLine(group)} on domain ${group.domain_id}` }))
      ),

    GroupAddLink: ({ groupId, linkId }) =>
      withGroups((groups) => groups.addLink(groupId, linkId)).pipe(
        Effect.map((done): Outcome => ({ json: done, text: `link ${linkId} is in group ${groupId}` }))
      ),

    GroupAddUser: ({ groupId, userId }) =>
      withGroups((groups) => groups.addUser(groupId, userId)).pipe(
        Effect.map((done): Outcome => ({ json: done, text: `user ${userId} sees group ${groupId}` }))
      ),

    GroupList: ({ domainId }) =>
      withGroups((groups) => groups.listAll(domainId)).pipe(
        Effect.map(
          (found): Outcome => ({
            json: { objects: found.map(groupJson) },
            text: found.length === 0 ? `domain ${domainId} has no groups` : `groups of domain ${domainId}: ${found.map(groupLine).join("; ")}`
          })
        )
      )
  })
