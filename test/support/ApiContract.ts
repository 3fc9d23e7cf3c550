import { HttpApi } from "@effect/platform"
import { Option, SchemaAST } from "effect"
import { Api } from "../../src/Api.ts"
import { Authentication } from "../../src/Auth/Authentication.ts"
import { routeLabeller } from "../../src/Platform/RouteLabels.ts"

/** The API contract by reflection, for fuzzing: every endpoint with its parameters, body shape and documented statuses. */

export type BodyKind = "none" | "object" | "array"

export interface Endpoint {
  /** `group.name`, e.g. `links.create`. */
  readonly id: string
  readonly method: string
  /** The path template under version 4, e.g. `/api/v4/:domain_id/links`. */
  readonly path: string
  readonly params: ReadonlyArray<string>
  readonly query: ReadonlyArray<string>
  readonly body: BodyKind
  readonly bodyFields: ReadonlyArray<string>
  readonly authenticated: boolean
  /** Every status the contract documents for it (successes and errors). */
  readonly documented: ReadonlySet<number>
  /** Served under /api/v4 and /api/v3 (the operational endpoints are top level only). */
  readonly versioned: boolean
}

/** The property names of a struct schema (through refinements and transformations), or "array". */
export const shapeOf = (ast: SchemaAST.AST): ReadonlyArray<string> | "array" | undefined => {
  switch (ast._tag) {
    case "TypeLiteral":
      return ast.propertySignatures.map((signature) => String(signature.name))
    case "TupleType":
      return "array"
    case "Refinement":
      return shapeOf(ast.from)
    case "Transformation":
      return shapeOf(ast.from)
    case "Suspend":
      return shapeOf(ast.f())
    default:
      return undefined
  }
}

export const namesOf = (schema: Option.Option<{ readonly ast: SchemaAST.AST }>): ReadonlyArray<string> =>
  Option.match(schema, {
    onNone: () => [],
    onSome: (s) => {
      const shape = shapeOf(s.ast)
      return shape === undefined || shape === "array" ? [] : shape
    }
  })

export const reflectEndpoints = (): ReadonlyArray<Endpoint> => {
  const found: Array<Endpoint> = []
  HttpApi.reflect(Api, {
    onGroup: () => undefined,
    onEndpoint: ({ group, endpoint, middleware, successes, errors }) => {
      const payload = endpoint.payloadSchema
      const shape = Option.match(payload, { onNone: () => undefined, onSome: (s) => shapeOf(s.ast) })
      found.push({
        id: `${group.identifier}.${endpoint.name}`,
        method: endpoint.method,
        path: endpoint.path,
        params: endpoint.path.split("/").filter((segment) => segment.startsWith(":")).map((segment) => segment.slice(1)),
        query: namesOf(endpoint.urlParamsSchema),
        body: Option.isNone(payload) ? "none" : shape === "array" ? "array" : "object",
        bodyFields: shape === undefined || shape === "array" ? [] : shape,
        authenticated: Array.from(middleware, (tag) => tag.key).includes(Authentication.key),
        documented: new Set([...successes.keys(), ...errors.keys()]),
        versioned: endpoint.path.startsWith("/api/v4/")
      })
    }
  })
  return found
}

export const ENDPOINTS = reflectEndpoints()

/** The endpoint template a request reaches, or "unmatched" (the service's own labeller, built from the contract). */
export const routeOf = routeLabeller(Api)
export const VERSIONS = ["/api/v4", "/api/v3"] as const
export type Version = (typeof VERSIONS)[number] | ""

/** Every endpoint once per version it is served under. */
export const ROUTES: ReadonlyArray<readonly [Endpoint, Version]> = ENDPOINTS.flatMap((endpoint): Array<readonly [Endpoint, Version]> =>
  endpoint.versioned ? VERSIONS.map((version) => [endpoint, version] as const) : [[endpoint, ""]]
)

export const isLogin = (endpoint: Endpoint) => endpoint.id === "auth.validateLogin" || endpoint.id === "auth.accessToken"

/** Every operation that reads a JSON body, by method and path under its version. */
export const BODY_OPERATIONS = [
  "POST /validate_login",
  "POST /access_token",
  "POST /domains",
  "PATCH /domains/{domain_id}",
  "POST /links/validate",
  "POST /{domain_id}/links",
  "PATCH /{domain_id}/links/{link_id}",
  "POST /tags",
  "PUT /{domain_id}/links/{link_id}/settings"
]
