import { Api } from "../Api.ts"
import { isV3Path } from "../V3/V3Adapter.ts"
import { PAGE_PATHS } from "./PagePaths.ts"
import { routeLabeller } from "./RouteLabels.ts"

/**
 * The route template of an API request (`/api/v4/links/:short_code`, version 3's under `/api/v3`),
 * the path of a docs page or OpenAPI document (served beside the HttpApi, GET only like its routes),
 * "unmatched" for anything else: the label of its metrics, its access line and its span's name.
 */
export const apiRouteLabeller = () => {
  const labelOf = routeLabeller(Api, PAGE_PATHS)
  return (method: string, path: string): string =>
    isV3Path(path) ? labelOf(method, `/api/v4${path.slice(7)}`).replace("/api/v4", "/api/v3") : labelOf(method, path)
}
