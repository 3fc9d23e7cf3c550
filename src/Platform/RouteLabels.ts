import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"

interface Route {
  readonly method: string
  readonly pattern: RegExp
  readonly label: string
}

/**
 * Maps a request to the path template of the endpoint it hits (`/api/v4/domains/:domain_id`), so that
 * metrics have one series per endpoint whatever ids or junk clients send; anything else is "unmatched".
 */
export const routeLabeller = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) => {
  const routes: Array<Route> = []
  HttpApi.reflect(api, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint }) => {
      const source = endpoint.path
        .split("/")
        .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
        .join("/")
      routes.push({ method: endpoint.method, pattern: new RegExp(`^${source}/?$`), label: endpoint.path })
    }
  })
  return (method: string, path: string): string => {
    for (const route of routes) {
      if (route.method === method && route.pattern.test(path)) return route.label
    }
    return "unmatched"
  }
}
