import { Effect, Either, Option } from "effect"
import type { Schema } from "effect"
import type { CreateLink } from "./LinksApi.ts"
import { ApiError, type ErrorItem } from "../Platform/ApiError.ts"
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
  generateAlias
} from "./LinkRules.ts"
import { UtmTemplateRepo } from "../Tags/UtmTemplateRepo.ts"

/**
 * E4's body read against the rules of CONTRACT §6: the link to insert, or every problem at once,
 * sorted by code.
 */
export const readCreateLink = (
  body: Schema.Schema.Type<typeof CreateLink>,
  context: { readonly accountId: number; readonly domainId: number; readonly now: number }
) =>
  Effect.gen(function* () {
    const problems: Array<ErrorItem> = []
    const take = <A>(result: Either.Either<A, ErrorItem>, fallback: A): A =>
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
    const archiveOn = take(checkScheduleDate(body.archive_on, "archive_on", context.now, { relativeDays: false }), null)
    const deleteOn = take(checkScheduleDate(body.delete_on, "delete_on", context.now, { relativeDays: false }), null)
    take(checkScheduleExclusive(archiveOn, deleteOn), { archiveOn, deleteOn })
    const tags = take(checkTags(body.tags), [])
    const templateId = take(checkTemplateId(body.utm_template_id), null)

    const template =
      templateId === null
        ? Option.none()
        : yield* (yield* UtmTemplateRepo).findOnDomain({ accountId: context.accountId, domainId: context.domainId, id: templateId })
    if (templateId !== null && Option.isNone(template)) problems.push(ApiError.item(10109))
    const utmValues =
      templateId !== null && Option.isNone(template) ? [] : take(checkUtmFields(Option.getOrUndefined(template), body.utm_fields), [])
    const redirectUrl = url === "" ? "" : take(appendUtmValues(url, utmValues), url)

    const sorted = problems.sort((a, b) => a.code - b.code)
    const [first, ...rest] = sorted
    if (first !== undefined) return yield* ApiError.all([first, ...rest])
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
