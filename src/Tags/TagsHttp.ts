import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { ApiError, type ErrorItem } from "../Platform/ApiError.ts"
import type { ErrorCode } from "../Platform/ErrorCatalogue.ts"
import { codePointLength } from "../Links/InputValues.ts"
import { MAX_NOTES_LENGTH, tagNameOf } from "../Links/LinkRules.ts"
import type { Caller } from "../Accounts/User.ts"
import { DomainRepo } from "../Domains/DomainRepo.ts"
import { TagRepo } from "./TagRepo.ts"
import { UtmTemplateRepo } from "./UtmTemplateRepo.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"

export const TagsHttpLive = HttpApiBuilder.group(Api, "tags", (handlers) =>
  Effect.gen(function* () {
    const domains = yield* DomainRepo
    const tags = yield* TagRepo
    const templates = yield* UtmTemplateRepo

    /** A domain of the caller's account; any other id is reported with `code` as not found. */
    const ownDomain = (caller: Caller, id: number, code: ErrorCode) =>
      Effect.flatMap(domains.byId({ accountId: caller.accountId, userId: caller.userId, id }), (domain) =>
        Option.isSome(domain) ? Effect.void : Effect.fail(ApiError.withStatus(404, code))
      )

    return handlers
      .handle("listTags", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentUser
          yield* ownDomain(caller, urlParams.domain_id, 10301)
          const objects = yield* tags.listVisible({
            domainId: urlParams.domain_id,
            userId: caller.userId,
            search: urlParams.search ?? ""
          })
          return { objects }
        }).pipe(orDieOnInfrastructure)
      )
      .handle("createTag", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentUser
          const name = tagNameOf(payload.name)
          const notes = payload.notes ?? ""
          const problems: Array<ErrorItem> = []
          if (name === undefined) problems.push(ApiError.item(10304))
          if (codePointLength(notes) > MAX_NOTES_LENGTH) problems.push(ApiError.item(10307))
          const [first, ...rest] = problems
          if (first !== undefined) return yield* ApiError.all([first, ...rest])
          yield* ownDomain(caller, payload.domain_id, 10301)
          const created = yield* tags.create({
            domainId: payload.domain_id,
            userId: caller.userId,
            name: name!,
            shared: payload.shared ?? false,
            notes
          })
          if (Option.isNone(created)) return yield* ApiError.of(10308)
          return { objects: [yield* tags.findById(created.value)] }
        }).pipe(orDieOnInfrastructure)
      )
      .handle("listUtmTemplates", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentUser
          yield* ownDomain(caller, urlParams.domain_id, 10201)
          const objects = yield* templates.listByDomain({ accountId: caller.accountId, domainId: urlParams.domain_id })
          return { objects }
        }).pipe(orDieOnInfrastructure)
      )
  })
)
