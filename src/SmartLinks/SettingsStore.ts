import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Option } from "effect"
import { Passwords } from "../Auth/Passwords.ts"
import { LinkNotFound, problem } from "../Links/LinkErrors.ts"
import { orderUtmValues } from "../Links/LinkPatch.ts"
import { InvalidInput } from "../Platform/Failure.ts"
import { appendUtmValues } from "../Tags/Utm.ts"
import { UtmTemplateRepo } from "../Tags/UtmTemplateRepo.ts"
import { destinationsOf, Settings, type StoredSettings } from "./SettingsModel.ts"
import { PreviewTags } from "./PreviewTags.ts"
import { SettingsRepo } from "./SettingsRepo.ts"
import { type ReadSettings, readSettings } from "./SettingsRules.ts"

const answerOf = (settings: StoredSettings, passwordSet: boolean) => new Settings({ ...settings, password_set: passwordSet })

/**
 * A link's smart settings read and replaced, whoever asks (the API's use cases check the caller
 * first; the admin CLI does not): the link must not be deleted.
 */
export class SettingsStore extends Effect.Service<SettingsStore>()("SettingsStore", {
  effect: Effect.gen(function* () {
    const repo = yield* SettingsRepo
    const templates = yield* UtmTemplateRepo
    const passwords = yield* Passwords
    const previews = yield* PreviewTags
    const sql = yield* SqlClient.SqlClient

    const show = (linkId: number) =>
      Effect.gen(function* () {
        if (Option.isNone(yield* repo.linkOf(linkId))) return yield* Effect.fail(LinkNotFound.of())
        return Option.match(yield* repo.find(linkId), {
          onNone: () => answerOf({}, false),
          onSome: (row) => answerOf(row.settings, row.password_set)
        })
      })

    /**
     * Replaces every setting with settings read against the rules (`readSettings`): the password
     * hashed on the hashing threads (as a request of the client `network`: a flood from one network
     * waits or is refused, not the others), the destinations served with the link's UTM fields entered in
     * the dictionary; the row written under the link's lock, which announces it to every instance.
     */
    const save = (linkId: number, { stored, password }: ReadSettings, network?: string) =>
      Effect.gen(function* () {
        const passwordHash = password === undefined ? null : yield* passwords.hash(password, network)
        yield* sql.withTransaction(
          Effect.gen(function* () {
            const link = yield* Effect.flatMap(repo.lockLink(linkId), (found) =>
              Option.isNone(found) ? Effect.fail(LinkNotFound.of()) : Effect.succeed(found.value)
            )
            const template =
              link.template_id === null
                ? Option.none()
                : yield* templates.findOnDomain({ accountId: link.account_id, domainId: link.domain_id, id: link.template_id })
            const codes = Option.match(template, { onNone: () => [], onSome: (found) => found.fields.map((field) => field.field_code) })
            const utm = orderUtmValues(link.utm_fields, codes)
            const served: Array<string> = []
            for (const url of destinationsOf(stored)) {
              const withUtm = appendUtmValues(url, utm)
              if (Either.isLeft(withUtm)) {
                return yield* Effect.fail(new InvalidInput({ problems: [problem(10713, "a destination with the link's UTM fields")] }))
              }
              served.push(withUtm.right)
            }
            yield* repo.replace({ linkId, settings: stored, targets: yield* repo.targetsOf(served), passwordHash })
          })
        )
        yield* previews.settingsSaved(linkId, stored.og === undefined && (Object.keys(stored).length > 0 || passwordHash !== null))
        return answerOf(stored, passwordHash !== null)
      })

    /** Replaces every setting with a body (any JSON) read against the rules: every problem at once. */
    const replace = (linkId: number, body: unknown) =>
      Effect.flatMap(Clock.currentTimeMillis, (millis) =>
        Either.match(readSettings(body, Math.floor(millis / 1000)), { onLeft: Effect.fail, onRight: (read) => save(linkId, read) })
      )

    return { show, save, replace } as const
  }),
  dependencies: [SettingsRepo.Default, PreviewTags.Default]
}) {}
