import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { ApiError } from "../Platform/ApiError.ts"
import { makeMeta, offsetOf } from "../Platform/Pagination.ts"
import { pageRequest } from "../Platform/ApiVersion.ts"
import { parseHttpUrl } from "./Url.ts"
import { LinkRepo } from "./LinkRepo.ts"
import { viewerOf } from "./LinkAccess.ts"
import { requestPath } from "../Platform/RequestUrl.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"

export const LinkSearchHttpLive = HttpApiBuilder.group(Api, "linkSearch", (handlers) =>
  Effect.gen(function* () {
    const links = yield* LinkRepo
    return handlers.handle("search", ({ path, urlParams, request }) =>
      Effect.gen(function* () {
        const viewer = yield* viewerOf(yield* CurrentUser, path.domain_id, { activeOnly: false })
        const all = urlParams.users === "all"
        if (all && !viewer.seesAll) return yield* ApiError.of(10003)
        const url = urlParams.url === undefined ? undefined : parseHttpUrl(urlParams.url, { assumeHttp: true })
        if (urlParams.url !== undefined && url === undefined) return yield* ApiError.of(10122)
        const page = yield* pageRequest(urlParams.page)
        const found = yield* links.search({
          domainId: path.domain_id,
          viewer,
          onlyOwn: !all,
          keyword: urlParams.keyword,
          url,
          tag: urlParams.tag,
          createdFrom: urlParams.from_unix,
          createdTo: urlParams.to_unix,
          newestFirst: urlParams.order === "latest",
          limit: page.perPage,
          offset: offsetOf(page)
        })
        return {
          total: found.total,
          count: found.links.length,
          click_count: found.clicks,
          objects: found.links,
          meta: makeMeta(page, found.links.length, found.total, requestPath(request))
        }
      }).pipe(orDieOnInfrastructure)
    )
  })
)
