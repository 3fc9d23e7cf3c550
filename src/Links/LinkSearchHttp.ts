import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { makeMeta } from "../Platform/Pagination.ts"
import { pageRequest } from "../Platform/ApiVersion.ts"
import { requestPath } from "../Platform/RequestUrl.ts"
import { Links } from "./Links.ts"

export const LinkSearchHttpLive = HttpApiBuilder.group(Api, "linkSearch", (handlers) =>
  Effect.gen(function* () {
    const links = yield* Links
    return handlers.handle("search", ({ path, urlParams, request }) =>
      Effect.gen(function* () {
        const caller = yield* CurrentUser
        const page = yield* pageRequest(urlParams.page)
        const found = yield* links.search(caller, path.domain_id, {
          allUsers: urlParams.users === "all",
          keyword: urlParams.keyword,
          url: urlParams.url,
          tag: urlParams.tag,
          groupId: urlParams.group_id,
          createdFrom: urlParams.from_unix,
          createdTo: urlParams.to_unix,
          newestFirst: urlParams.order === "latest",
          page
        })
        return {
          total: found.total,
          count: found.links.length,
          click_count: found.clicks,
          objects: found.links,
          meta: makeMeta(page, found.links.length, found.total, requestPath(request))
        }
      })
    )
  })
)
