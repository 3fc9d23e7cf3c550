import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { ApiError } from "../Platform/ApiError.ts"
import type { TagDomainNotFound, UtmTemplateDomainNotFound } from "./TagErrors.ts"
import { Tags } from "./Tags.ts"

/**
 * A domain that is not found is answered 404 with its code, whose catalogue status (400, for a
 * `domain_id` that is no id) the edge would give a failure: only an `ApiError` carries another status.
 */
const notFound = (failure: TagDomainNotFound | UtmTemplateDomainNotFound) => ApiError.withStatus(404, failure.code)

export const TagsHttpLive = HttpApiBuilder.group(Api, "tags", (handlers) =>
  Effect.gen(function* () {
    const tags = yield* Tags
    return handlers
      .handle("listTags", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => tags.list(caller, urlParams.domain_id, urlParams.search ?? "")).pipe(
          Effect.map((objects) => ({ objects })),
          Effect.catchTag("TagDomainNotFound", notFound)
        )
      )
      .handle("createTag", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => tags.create(caller, payload)).pipe(
          Effect.map((tag) => ({ objects: [tag] })),
          Effect.catchTag("TagDomainNotFound", notFound)
        )
      )
      .handle("listUtmTemplates", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => tags.utmTemplates(caller, urlParams.domain_id)).pipe(
          Effect.map((objects) => ({ objects })),
          Effect.catchTag("UtmTemplateDomainNotFound", notFound)
        )
      )
  })
)
