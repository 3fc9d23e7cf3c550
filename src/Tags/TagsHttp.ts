import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { Tags } from "./Tags.ts"

export const TagsHttpLive = HttpApiBuilder.group(Api, "tags", (handlers) =>
  Effect.gen(function* () {
    const tags = yield* Tags
    return handlers
      .handle("listTags", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => tags.list(caller, urlParams.domain_id, urlParams.search ?? "")).pipe(
          Effect.map((objects) => ({ objects }))
        )
      )
      .handle("createTag", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => tags.create(caller, payload)).pipe(
          Effect.map((tag) => ({ objects: [tag] }))
        )
      )
      .handle("listUtmTemplates", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => tags.utmTemplates(caller, urlParams.domain_id)).pipe(
          Effect.map((objects) => ({ objects }))
        )
      )
  })
)
