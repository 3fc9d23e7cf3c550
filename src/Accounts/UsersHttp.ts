import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { pageRequest } from "../Platform/ApiVersion.ts"
import { makeMeta } from "../Platform/Pagination.ts"
import { requestPath } from "../Platform/RequestUrl.ts"
import { Users } from "./Users.ts"

export const UsersHttpLive = HttpApiBuilder.group(Api, "users", (handlers) =>
  Effect.gen(function* () {
    const users = yield* Users
    return handlers.handle("list", ({ urlParams, request }) =>
      Effect.gen(function* () {
        const page = yield* pageRequest(urlParams.page)
        const { users: found, total } = yield* users.list(yield* CurrentUser, page)
        return { objects: found, meta: makeMeta(page, found.length, total, requestPath(request)) }
      })
    )
  })
)
