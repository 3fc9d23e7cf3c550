import { Effect, Layer, Match, type ParseResult } from "effect"
import { Tags } from "../Tags/Tags.ts"
import type { Group } from "../Groups/Group.ts"
import { Groups } from "../Groups/Groups.ts"
import { Accounts } from "../Accounts/Accounts.ts"
import { AdminError } from "../Accounts/AdminError.ts"
import { AccountRepo } from "../Accounts/AccountRepo.ts"
import { UserRepo } from "../Accounts/UserRepo.ts"
import { DomainRepo } from "../Domains/DomainRepo.ts"
import { type LoginsBusy, SecretFromEnvironment, UnknownUser, WeakPassword } from "../Auth/AuthErrors.ts"
import { LoginThrottle } from "../Auth/LoginThrottle.ts"
import { Passwords } from "../Auth/Passwords.ts"
import { Sessions } from "../Auth/Sessions.ts"
import { TokenSecret, TokenStore } from "../Auth/TokenStore.ts"
import { ChangeFeed } from "../Sql/ChangeFeed.ts"
import { AdminDatabaseLive } from "../Sql/Database.ts"
import { migrate } from "../Sql/Migrator.ts"
import { CommandDatabaseLive as database } from "./CommandDatabase.ts"
import type { Command, InventoryCommand } from "./Command.ts"
import { fieldsOf, type Outcome } from "./Outcome.ts"
import { table } from "./Table.ts"
import { readPassword } from "./PasswordInput.ts"
import { Importer } from "../Import/Importer.ts"
import { importOutcome, importReporter } from "./ImportOutput.ts"
import { writeCsv } from "./CsvOutput.ts"
import { ExportCsv } from "../Export/ExportCsv.ts"
import { isCodedFailure } from "../Platform/Failure.ts"
import { webhookCommands } from "./WebhookCommands.ts"
import { readFileSync } from "node:fs"
import type { Settings } from "../SmartLinks/SettingsModel.ts"
import type { LinkNotFound } from "../Links/LinkErrors.ts"
import type { InvalidInput } from "../Platform/Failure.ts"
import type { SqlError } from "@effect/sql/SqlError"
import { SettingsStore } from "../SmartLinks/SettingsStore.ts"
import { UrlChecker } from "../Links/UrlChecker.ts"
import { UtmTemplateRepo } from "../Tags/UtmTemplateRepo.ts"

const passwords = Passwords.layer
const AccountsLive = Accounts.Default.pipe(
  Layer.provide(Layer.mergeAll(AccountRepo.Default, UserRepo.Default, DomainRepo.Default, passwords)),
  Layer.provideMerge(database)
)
const SessionsLive = Sessions.DefaultWithoutDependencies.pipe(
  Layer.provide(Layer.mergeAll(UserRepo.Default, TokenStore.Default.pipe(Layer.provide(TokenSecret.Default)), LoginThrottle.Default, passwords)),
  Layer.provideMerge(database)
)
const GroupsLive = Groups.Default.pipe(Layer.provide(Layer.merge(DomainRepo.Default, ChangeFeed.Default)), Layer.provideMerge(database))
const TagsLive = Tags.Default.pipe(Layer.provideMerge(database))
const ImporterLive = Importer.Default.pipe(Layer.provideMerge(database))

const withAccounts = <A, E>(f: (accounts: Accounts) => Effect.Effect<A, E, never>) => Effect.provide(Effect.flatMap(Accounts, f), AccountsLive)

const ExportLive = ExportCsv.Default.pipe(Layer.provideMerge(database))

/**
 * An export of a domain that exists, deleted or not, written to `output` or standard output; a
 * refusal of its rules (window, link) said as the API says it, code first.
 */
const exported = (domainId: number, output: string | undefined, file: (files: ExportCsv) => ReturnType<ExportCsv["clicks"]>) =>
  Effect.gen(function* () {
    const files = yield* ExportCsv
    if (!(yield* files.domainExists(domainId))) return yield* new AdminError({ message: `there is no domain ${domainId}` })
    return yield* writeCsv(output, yield* file(files))
  }).pipe(
    Effect.mapError((error) => (isCodedFailure(error) ? new AdminError({ message: `${error.code} ${error.message}` }) : error)),
    Effect.provide(ExportLive)
  )

/** The hashing queue is full: said as the API's error is, code first. */
const busy = (failure: LoginsBusy) => new AdminError({ message: `${failure.code} ${failure.message}` })

const SettingsLive = SettingsStore.Default.pipe(Layer.provide(Layer.mergeAll(UtmTemplateRepo.Default, passwords, UrlChecker.layer)), Layer.provideMerge(database))

/** A link's settings by the store, as `--json` and a record; a missing link, a refused body or a full hashing queue in one line. */
const withSettings = (
  linkId: number,
  f: (store: SettingsStore) => Effect.Effect<Settings, LinkNotFound | InvalidInput | LoginsBusy | SqlError | ParseResult.ParseError>
) =>
  Effect.provide(Effect.flatMap(SettingsStore, f), SettingsLive).pipe(
    Effect.catchTags({
      LinkNotFound: () => new AdminError({ message: `there is no link ${linkId}` }),
      InvalidInput: (refused) => new AdminError({ message: refused.problems.map((item) => `${item.code} ${item.message}`).join("; ") }),
      LoginsBusy: busy
    }),
    Effect.map((settings): Outcome => {
      const json = fieldsOf(settings)
      return { json, text: JSON.stringify(json, null, 2) }
    })
  )

const quota = (linkQuota: number | null) => (linkQuota === null ? "unlimited links" : `at most ${linkQuota} links`)

/** A Sessions operation of the operator's, an unknown e-mail or a refused password said in one line. */
const withSessions = <A, E>(f: (sessions: Sessions) => Effect.Effect<A, E, never>) =>
  Effect.catchIf(
    Effect.provide(Effect.flatMap(Sessions, f), SessionsLive),
    (failure) => failure instanceof UnknownUser || failure instanceof WeakPassword || failure instanceof SecretFromEnvironment,
    (failure) => new AdminError({ message: failure.message })
  )

const withGroups = <A, E>(f: (groups: Groups) => Effect.Effect<A, E, never>) => Effect.provide(Effect.flatMap(Groups, f), GroupsLive)

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

const seenBy = (group: Group) => (group.is_global === "1" ? "global" : group.users.length === 0 ? "private" : `users ${group.users.join(", ")}`)

const groupLine = (group: Group) => `${group.id} "${group.name}" (owner user ${group.user_id}, ${seenBy(group)})`

/** A group as a row of `group list`'s table. */
const groupRow = (group: Group) => ({ id: group.id, name: group.name, owner: group.user_id, seen_by: seenBy(group) })

/** A command that changes data through the API's services (or imports, exports, migrates); loaded only for one. */
export type ServiceCommand = Exclude<Command, { readonly _tag: "Help" | "Version" | InventoryCommand["_tag"] }>

export const serviceCommand = (command: ServiceCommand) =>
  Match.valueTags(command, {
    ...webhookCommands,
    Migrate: () =>
      migrate.pipe(
        Effect.provide(AdminDatabaseLive),
        Effect.map(
          (applied): Outcome => ({
            json: { applied },
            text: applied.length === 0 ? "the database schema is up to date" : `applied migrations ${applied.join(", ")}`
          })
        )
      ),

    Import: ({ json, ...options }) => {
      const reporter = importReporter(json, process.stdout, process.stderr)
      return Effect.provide(Effect.flatMap(Importer, (importer) => importer.run(options, reporter.onEvent)), ImporterLive).pipe(
        Effect.ensuring(reporter.done),
        Effect.map(importOutcome)
      )
    },

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
      Effect.flatMap(readPassword(input.password, input.email), (password) => withAccounts((accounts) => accounts.createUser({ ...input, password }))).pipe(
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
      Effect.flatMap(readPassword(password, email), (typed) => withSessions((sessions) => sessions.changePassword(email, typed))).pipe(
        Effect.catchTag("LoginsBusy", busy),
        Effect.map(
          (user): Outcome => ({ json: user, text: `new password of user ${user.user_id} ${user.email}; their access tokens no longer work` })
        )
      ),

    UserRevokeTokens: ({ email }) =>
      withSessions((sessions) => sessions.revokeTokens(email)).pipe(
        Effect.map((user): Outcome => ({ json: user, text: `the access tokens of user ${user.user_id} ${user.email} no longer work` }))
      ),

    UserDelete: ({ email, reassignTo }) =>
      withAccounts((accounts) => accounts.deleteUser(email, reassignTo)).pipe(
        Effect.map((user): Outcome => ({
          json: user,
          text:
            "reassigned_to" in user
              ? `deleted user ${user.user_id} ${user.email}; their ${user.links} link(s), ${user.tags} tag(s) and ${user.groups} group(s) now belong to user ${user.reassigned_to}`
              : `deleted user ${user.user_id} ${user.email}`
        }))
      ),

    TokenSecretRotate: () =>
      withSessions((sessions) => sessions.rotateTokenSecret).pipe(
        Effect.map(
          (rotated): Outcome => ({
            json: { revoked_access_tokens: rotated.revoked_access_tokens },
            text: `a new token secret is in ${rotated.file}; ${rotated.revoked_access_tokens} access token(s) no longer work (users log in again)`
          })
        )
      ),

    LinkSettings: ({ linkId }) => withSettings(linkId, (store) => store.show(linkId)),

    LinkSetSettings: ({ file, linkId }) =>
      Effect.try({
        try: (): unknown => JSON.parse(readFileSync(file, "utf8")),
        catch: (error) => new AdminError({ message: `${file} is not a readable JSON file (${error instanceof Error ? error.message : String(error)})` })
      }).pipe(Effect.flatMap((body) => withSettings(linkId, (store) => store.replace(linkId, body)))),

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
      Effect.provide(Effect.flatMap(Tags, (tags) => tags.createUtmTemplate(domainId, name, fields)), TagsLive).pipe(
        Effect.catchTag("UtmTemplateDomainNotFound", () => new AdminError({ message: `there is no domain ${domainId}` })),
        Effect.map(
          (template): Outcome => ({
            json: { id: template.id, name: template.name, fields: template.fields },
            text: `created UTM template ${template.id} "${template.name}" with ${template.fields.length} field(s) on domain ${domainId}`
          })
        )
      ),

    ExportLinks: ({ domainId, output }) => exported(domainId, output, (files) => Effect.succeed(files.links(domainId))),

    ExportClicks: ({ domainId, from, to, linkId, output }) =>
      exported(domainId, output, (files) => files.clicks(domainId, { from_unix: from, to_unix: to, link_id: linkId })),

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
            text: found.length === 0 ? `domain ${domainId} has no groups` : table(found.map(groupRow), ["id", "name", "owner", "seen_by"])
          })
        )
      )
  })
