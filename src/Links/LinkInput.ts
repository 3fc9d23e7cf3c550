import { Effect, Either, Option } from "effect"
import type { InvalidInput } from "../Platform/Failure.ts"
import {
  appendUtmValues,
  checkAlias,
  checkNotes,
  checkScheduleDate,
  checkScheduleExclusive,
  checkTags,
  checkUrl,
  checkUtmFields,
  DEFAULT_RAND_ALIAS_LENGTH,
  DEFAULT_REDIRECT_TYPE,
  generateAlias,
  notifyOnClickInvalid,
  type UtmTemplateFields
} from "./LinkRules.ts"
import { type InputProblem, invalidInputOf, problem, UtmTemplateNotFound } from "./LinkErrors.ts"
import type { CreateLinkInput } from "./LinkFields.ts"
import { type Invalid, isInvalid } from "../Platform/Coded.ts"

/**
 * E4's body, decoded to its fields' types, read against the link rules: the link to insert, or every
 * problem at once, sorted by code: the type errors decoding found (each field's `Invalid`) and what
 * the rules find in the other fields. `findTemplate` looks a UTM template of the domain up by id.
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

    /**
     * A field as decoded: its type error reported (and the fallback used), its rule applied to its
     * value, or the fallback when it was left out or null.
     */
    const read = <V, A>(
      value: V | Invalid | null | undefined,
      rule: (value: V) => Either.Either<A, InputProblem>,
      fallback: A,
      invalid?: InputProblem
    ): A => {
      if (value === undefined || value === null) return fallback
      if (!isInvalid(value)) return take(rule(value), fallback)
      problems.push(invalid ?? problem(value.code))
      return fallback
    }
    /** A field whose schema is its whole rule. */
    const typed = <V>(value: V): Either.Either<V, InputProblem> => Either.right(value)

    const url = read(body.url, (given) => checkUrl(given, "create"), "")
    const alias = read<string, string | undefined>(body.alias, (given) => checkAlias(given, "create"), undefined)
    // The specification: rand_alias_length is ignored when an alias is given (a wrong one too).
    const aliasGiven = body.alias !== undefined && body.alias !== null
    const aliasLength = aliasGiven ? DEFAULT_RAND_ALIAS_LENGTH : read(body.rand_alias_length, typed, DEFAULT_RAND_ALIAS_LENGTH)
    const notes = read(body.notes, (given) => checkNotes(given, "create"), "")
    const notifyOnClick = read(body.notify_on_click, typed, false, notifyOnClickInvalid("create"))
    const redirectType = read<301 | 307, 301 | 307>(body.redirect_type, typed, DEFAULT_REDIRECT_TYPE)
    const archiveOn = read<number, number | null>(body.archive_on, (given) => checkScheduleDate(given, "archive_on", now), null)
    const deleteOn = read<number, number | null>(body.delete_on, (given) => checkScheduleDate(given, "delete_on", now), null)
    take(checkScheduleExclusive(archiveOn, deleteOn), { archiveOn, deleteOn })
    const tags = read(body.tags, checkTags, [])
    const templateId = read<number, number | null>(body.utm_template_id, typed, null)

    const template = templateId === null ? Option.none() : yield* findTemplate(templateId)
    if (templateId !== null && Option.isNone(template)) problems.push(UtmTemplateNotFound.of())
    const utmValues =
      templateId !== null && Option.isNone(template)
        ? []
        : // Left out, they are checked too: the template may have required fields.
          read(body.utm_fields ?? {}, (given) => checkUtmFields(Option.getOrUndefined(template), given), [])
    const redirectUrl = url === "" ? "" : take(appendUtmValues(url, utmValues), url)

    const invalid = invalidInputOf(problems.sort((a, b) => a.code - b.code))
    if (Option.isSome(invalid)) return yield* Effect.fail<InvalidInput>(invalid.value)
    return {
      url,
      alias,
      generateAlias: () => generateAlias(aliasLength),
      checkUrl: body.override_404_check !== true,
      dupeCheck: body.dupe_check === true,
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
