import { Effect, Option } from "effect"
import type { Caller } from "../Accounts/User.ts"
import { DomainRepo } from "../Domains/DomainRepo.ts"
import { codePointLength } from "../Links/InputValues.ts"
import { MAX_NOTES_LENGTH, tagNameOf } from "../Links/LinkRules.ts"
import { InvalidInput } from "../Platform/Failure.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import type { Tag } from "./Tag.ts"
import { TagDomainNotFound, TagNameExists, UtmTemplateDomainNotFound } from "./TagErrors.ts"
import { TagRepo } from "./TagRepo.ts"
import type { UtmField, UtmTemplate } from "./UtmTemplate.ts"
import { UtmTemplateRepo } from "./UtmTemplateRepo.ts"

export interface CreateTagInput {
  readonly domain_id: number
  readonly name: string
  readonly shared?: boolean | undefined
  readonly notes?: string | undefined
}

/**
 * The tags and UTM templates of a domain (T1, T2, E15). Both belong to a domain of the caller's
 * account: any other domain is not found. Of its tags, a caller sees the shared ones and their own.
 */
export class Tags extends Effect.Service<Tags>()("Tags", {
  effect: Effect.gen(function* () {
    const domains = yield* DomainRepo
    const tags = yield* TagRepo
    const templates = yield* UtmTemplateRepo

    const ownDomain = <E>(caller: Caller, id: number, notFound: () => E) =>
      Effect.flatMap(domains.byId({ accountId: caller.accountId, userId: caller.userId, id }), (domain) =>
        Option.isSome(domain) ? Effect.void : Effect.fail(notFound())
      )

    /** T1: the domain's tags the caller sees whose name contains `search` (any case), by name. */
    const list = (caller: Caller, domainId: number, search: string): Effect.Effect<ReadonlyArray<Tag>, TagDomainNotFound> =>
      ownDomain(caller, domainId, () => TagDomainNotFound.of()).pipe(
        Effect.zipRight(tags.listVisible({ domainId, userId: caller.userId, search })),
        orDieOnInfrastructure
      )

    /** T2: a tag of the caller on one of their account's domains; the name and notes are checked first, together. */
    const create = (caller: Caller, input: CreateTagInput): Effect.Effect<Tag, InvalidInput | TagDomainNotFound | TagNameExists> =>
      Effect.gen(function* () {
        const name = tagNameOf(input.name)
        const notes = input.notes ?? ""
        const notesTooLong = codePointLength(notes) > MAX_NOTES_LENGTH
        if (name === undefined) return yield* InvalidInput.of(10304, ...(notesTooLong ? [10307 as const] : []))
        if (notesTooLong) return yield* InvalidInput.of(10307)
        yield* ownDomain(caller, input.domain_id, () => TagDomainNotFound.of())
        const created = yield* tags.create({ domainId: input.domain_id, userId: caller.userId, name, shared: input.shared ?? false, notes })
        if (Option.isNone(created)) return yield* TagNameExists.of()
        return yield* tags.findById(created.value)
      }).pipe(orDieOnInfrastructure)

    /** E15: the UTM templates of a domain of the caller's account, oldest first. */
    const utmTemplates = (caller: Caller, domainId: number): Effect.Effect<ReadonlyArray<UtmTemplate>, UtmTemplateDomainNotFound> =>
      ownDomain(caller, domainId, () => UtmTemplateDomainNotFound.of()).pipe(
        Effect.zipRight(templates.listByDomain({ accountId: caller.accountId, domainId })),
        orDieOnInfrastructure
      )

    /**
     * The operator's: a UTM template on any domain (the API creates none). Database failures stay
     * failures, which the admin CLI reports in one line.
     */
    const createUtmTemplate = (domainId: number, name: string, fields: ReadonlyArray<UtmField>) =>
      Effect.flatMap(
        templates.create({ domainId, name, fields }),
        Option.match({ onNone: () => Effect.fail(UtmTemplateDomainNotFound.of()), onSome: Effect.succeed })
      )

    return { list, create, utmTemplates, createUtmTemplate } as const
  }),
  dependencies: [DomainRepo.Default, TagRepo.Default, UtmTemplateRepo.Default]
}) {}
