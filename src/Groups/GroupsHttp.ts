import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { pageRequest } from "../Platform/ApiVersion.ts"
import { makeMeta } from "../Platform/Pagination.ts"
import { requestPath } from "../Platform/RequestUrl.ts"
import { Groups } from "./Groups.ts"

export const GroupsHttpLive = HttpApiBuilder.group(Api, "groups", (handlers) =>
  Effect.gen(function* () {
    const groups = yield* Groups
    return handlers.handle("listGroups", ({ urlParams, request }) =>
      Effect.gen(function* () {
        const caller = yield* CurrentUser
        const page = yield* pageRequest(urlParams.page)
        const found = yield* groups.list(caller, urlParams.domain_id, page)
        return { objects: found.groups, meta: makeMeta(page, found.groups.length, found.total, requestPath(request)) }
      })
    )
  })
)
