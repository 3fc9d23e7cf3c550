import { OpenApi } from "@effect/platform"
import { Api } from "../../src/Api.ts"
import { isPlainObject } from "../../src/Links/InputValues.ts"
import { openApiV3 } from "../../src/V3/V3OpenApi.ts"

type Json = Readonly<Record<string, unknown>>

const object = (value: unknown): Json => (isPlainObject(value) ? value : {})

/** A schema with a `#/components/schemas/...` reference followed. */
const resolve = (document: unknown, schema: unknown): Json => {
  const ref = object(schema).$ref
  if (typeof ref !== "string" || !ref.startsWith("#/components/schemas/")) return object(schema)
  return object(object(object(object(document).components).schemas)[ref.slice("#/components/schemas/".length)])
}

/**
 * The property names (sorted) of each alternative of E23's success body in an OpenAPI document:
 * what a typed client generated from the document reads at the top level.
 */
export const linkTotalsShapes = (document: unknown, prefix: "/api/v4" | "/api/v3"): ReadonlyArray<ReadonlyArray<string>> => {
  const path = object(object(document).paths)[`${prefix}/{domain_id}/links/{link_id}/clicks`]
  const ok = object(object(object(object(path).get).responses)["200"])
  const body = resolve(document, object(object(ok.content)["application/json"]).schema)
  const alternatives = Array.isArray(body.anyOf) ? body.anyOf : [body]
  return alternatives.map((alternative) => Object.keys(object(resolve(document, alternative).properties)).sort())
}

/** The error codes an OpenAPI document says one operation answers with `status` (every alternative, references followed). */
export const documentedCodes = (document: unknown, path: string, method: string, status: string): ReadonlyArray<number> => {
  const response = object(object(object(object(object(object(document).paths)[path])[method]).responses)[status])
  const codes = new Set<number>()
  const visit = (schema: unknown): void => {
    const resolved = resolve(document, schema)
    for (const alternative of Array.isArray(resolved.anyOf) ? resolved.anyOf : []) visit(alternative)
    const errors = object(object(resolved.properties).errors)
    const items = [errors.items, ...(Array.isArray(errors.prefixItems) ? errors.prefixItems : [])]
    for (const item of items) {
      const code = object(object(resolve(document, item).properties).code)
      for (const value of Array.isArray(code.enum) ? code.enum : []) if (typeof value === "number") codes.add(value)
    }
  }
  visit(object(object(response.content)["application/json"]).schema)
  return [...codes].sort()
}

/** The two OpenAPI documents the service serves, made from the API definition as the service makes them. */
export const openApiDocuments = (): { readonly v4: unknown; readonly v3: unknown } => {
  // Copies: the framework caches its document, and the version 3 mapping must not see another's edits.
  const v4: unknown = JSON.parse(JSON.stringify(OpenApi.fromApi(Api)))
  return { v4, v3: openApiV3(JSON.parse(JSON.stringify(v4))) }
}
