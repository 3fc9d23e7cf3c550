import { Context, Effect } from "effect"
import { PAGE_SIZE_V3, PAGE_SIZE_V4, type PageRequest } from "./Pagination.ts"

/** The API version a request came in through: 4, or 3 when the version 3 adapter serves it. */
export class ApiVersion extends Context.Reference<ApiVersion>()("ApiVersion", { defaultValue: (): 3 | 4 => 4 }) {}

/** The requested page (1 when not given) at the page size of the request's API version. */
export const pageRequest = (page: number | undefined): Effect.Effect<PageRequest> =>
  Effect.map(ApiVersion, (version) => ({ page: page ?? 1, perPage: version === 3 ? PAGE_SIZE_V3 : PAGE_SIZE_V4 }))
