import { Effect, Either, Option } from "effect"
import type { InvalidInput } from "../Platform/Failure.ts"
import {
  appendUtmValues,
  checkAlias,
  checkNotes,
  checkNotifyOnClick,
  checkRandAliasLength,
  checkRedirectType,
  checkScheduleDate,
  checkScheduleExclusive,
  checkTags,
  checkTemplateId,
  checkUrl,
  checkUtmFields,
  generateAlias,
  type UtmTemplateFields
} from "./LinkRules.ts"
import { type InputProblem, invalidInputOf, UtmTemplateNotFound } from "./LinkErrors.ts"

/** E4's body as the client sent it: every field is read by the rules of `LinkRules.ts`. */
export interface CreateLinkInput {
  readonly url?: unknown
  readonly alias?: unknown
  readonly rand_alias_length?: unknown
  readonly dupe_check?: unknown
  readonly notes?: unknown
  readonly notify_on_click?: unknown
  readonly override_404_check?: unknown
  readonly tags?: unknown
  readonly utm_template_id?: unknown
  readonly utm_fields?: unknown
  readonly archive_on?: unknown
  readonly delete_on?: unknown
  readonly redirect_type?: unknown
}

/**
 * E4's body read against the link rules: the link to insert, or every problem at once, sorted by
 * code. `findTemplate` looks a UTM template of the domain up by id.
 */
export const readCreateLink = <E, R>(
  body: CreateLinkInput,
  now: number,
  findTemplate: (id: number) => Effect.Effect<Option.Option<UtmTemplateFields>, E, R>
) =>
  Effect.gen(function* () {
    const problems: Array<InputProblem> = []
    const take = <A>(result: Either.Either<A, InputProblem>, fallback: A): A =>
      Either.match(result, {
        onLeft: (item) => {
          problems.push(item)
          return fallback
        },
        onRight: (value) => value
      })

    const url = take(checkUrl(body.url, "create"), "")
    const alias = body.alias === undefined || body.alias === null ? undefined : take(checkAlias(body.alias, "create"), "")
    // The specification: rand_alias_length is ignored when an alias is given.
    const aliasLength = alias === undefined ? take(checkRandAliasLength(body.rand_alias_length), 6) : 6
    const notes = take(checkNotes(body.notes, "create"), "")
    const notifyOnClick = take(checkNotifyOnClick(body.notify_on_click, "create"), false)
    const redirectType = take(checkRedirectType(body.redirect_type), 301)
    const archiveOn = take(checkScheduleDate(body.archive_on, "archive_on", now, { relativeDays: false }), null)
    const deleteOn = take(checkScheduleDate(body.delete_on, "delete_on", now, { relativeDays: false }), null)
    take(checkScheduleExclusive(archiveOn, deleteOn), { archiveOn, deleteOn })
    const tags = take(checkTags(body.tags), [])
    const templateId = take(checkTemplateId(body.utm_template_id), null)

    const template = templateId === null ? Option.none() : yield* findTemplate(templateId)
    if (templateId !== null && Option.isNone(template)) problems.push(UtmTemplateNotFound.of())
    const utmValues =
      templateId !== null && Option.isNone(template) ? [] : take(checkUtmFields(Option.getOrUndefined(template), body.utm_fields), [])
    const redirectUrl = url === "" ? "" : take(appendUtmValues(url, utmValues), url)

    const invalid = invalidInputOf(problems.sort((a, b) => a.code - b.code))
    if (Option.isSome(invalid)) return yield* Effect.fail<InvalidInput>(invalid.value)
    return {
      url,
      alias,
      generateAlias: () => generateAlias(aliasLength),
      checkUrl: body.override_404_check !== 1 && body.override_404_check !== "1",
      dupeCheck: body.dupe_check === 1 || body.dupe_check === "1",
      tags,
      link: {
        url,
        redirectUrl,
        notes,
        notifyOnClick,
        redirectType,
        templateId,
        utmFields: utmValues.length === 0 ? null : Object.fromEntries(utmValues),
        archiveOn,
        deleteOn
      }
    }
  })
