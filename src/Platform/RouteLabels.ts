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
 * The first route in the API's order whose pattern matches wins; a path spelled exactly as a template
 * without parameters (`/healthz`) is looked up by method and path, to the label that scan gives it.
 * `pages` are served beside the API (GET only, no parameters): each is labelled as itself by the same
 * lookup.
 */
export const routeLabeller = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  pages: Iterable<string> = []
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
  const scan = (method: string, path: string): string => {
    for (const route of routes) {
      if (route.method === method && route.pattern.test(path)) return route.label
    }
    return "unmatched"
  }
  const exact = new Map<string, Map<string, string>>()
  for (const route of routes) {
    if (route.label.includes(":")) continue
    const paths = exact.get(route.method) ?? new Map<string, string>()
    paths.set(route.label, scan(route.method, route.label))
    exact.set(route.method, paths)
  }
  const gets = exact.get("GET") ?? new Map<string, string>()
  for (const page of pages) gets.set(page, page)
  exact.set("GET", gets)
  return (method: string, path: string): string => exact.get(method)?.get(path) ?? scan(method, path)
}
