import { isPlainObject } from "../Links/InputValues.ts"

type Json = Readonly<Record<string, unknown>>

const object = (value: unknown): Json => (isPlainObject(value) ? value : {})

/** A schema object without some properties (and without them in `required`). */
const without = (schema: unknown, names: ReadonlyArray<string>): Json => {
  const s = object(schema)
  const properties = Object.fromEntries(Object.entries(object(s.properties)).filter(([name]) => !names.includes(name)))
  const required = Array.isArray(s.required) ? s.required.filter((name) => !names.includes(String(name))) : s.required
  return { ...s, properties, required }
}

/** A schema object keeping only some properties. */
const only = (schema: unknown, names: ReadonlyArray<string>): Json => {
  const s = object(schema)
  return without(s, Object.keys(object(s.properties)).filter((name) => !names.includes(name)))
}

const LINK_REF = { $ref: "#/components/schemas/Link" }

const DAY_OFFSET = { type: "string", pattern: "^-?[0-9]{1,5}d$", description: "now plus or minus N days" }

/** E12's operations as version 3 takes them: no /notify_on_click; dates also as day offsets ("30d"). */
const updateOperationsV3 = (body: unknown): Json => {
  const schema = object(body)
  const items = object(schema.items)
  const pathOf = (operation: unknown) => {
    const values = object(object(object(operation).properties).path).enum
    return Array.isArray(values) ? values[0] : undefined
  }
  const operations = (Array.isArray(items.anyOf) ? items.anyOf : [])
    .filter((operation) => pathOf(operation) !== "/notify_on_click")
    .map((operation) => {
      if (pathOf(operation) !== "/delete_on" && pathOf(operation) !== "/archive_on") return operation
      const properties = object(object(operation).properties)
      const value = object(properties.value)
      const alternatives = Array.isArray(value.anyOf) ? value.anyOf : [value]
      return { ...object(operation), properties: { ...properties, value: { ...value, anyOf: [...alternatives, DAY_OFFSET] } } }
    })
  return { ...schema, items: { ...items, anyOf: operations } }
}

/** An operation's JSON request body schema mapped by `map`. */
const mapRequestBody = (operation: unknown, map: (schema: unknown) => unknown): Json => {
  const requestBody = object(object(operation).requestBody)
  const json = object(object(requestBody.content)["application/json"])
  return { ...object(operation), requestBody: { ...requestBody, content: { "application/json": { ...json, schema: map(json.schema) } } } }
}

/**
 * The version 3 OpenAPI document, derived from version 4's by the differences of version 3: the
 * paths under /api/v3, links without notify_on_click (one object on create, get, update and by
 * alias), domains with six fields, create without three inputs, update without /notify_on_click and
 * with day offsets for the dates, pages of 20.
 */
export const openApiV3 = (document: unknown): unknown => {
  const doc = object(document)
  const schemas = object(object(doc.components).schemas)
  const paths = Object.fromEntries(
    Object.entries(object(doc.paths))
      .filter(([path]) => path.startsWith("/api/v4/"))
      .map(([path, item]) => [path.replace("/api/v4/", "/api/v3/"), item])
  )
  const create = object(paths["/api/v3/{domain_id}/links"])
  const createPost = mapRequestBody(create.post, (schema) => without(schema, ["rand_alias_length", "override_404_check", "notify_on_click"]))
  const update = object(paths["/api/v3/{domain_id}/links/{link_id}"])
  const single = (schema: unknown) => ({ ...object(schema), properties: { ...object(object(schema).properties), objects: LINK_REF } })
  return {
    ...doc,
    info: {
      ...object(doc.info),
      version: "3",
      description: "Version 3 of the API: the same paths as version 4 under /api/v3, with its differences (pages of 20)."
    },
    paths: {
      ...paths,
      "/api/v3/{domain_id}/links": { ...create, post: createPost },
      "/api/v3/{domain_id}/links/{link_id}": { ...update, patch: mapRequestBody(update.patch, updateOperationsV3) }
    },
    components: {
      ...object(doc.components),
      schemas: {
        ...schemas,
        Link: without(schemas.Link, ["notify_on_click"]),
        Domain: only(schemas.Domain, ["id", "domain", "created", "modified", "default", "type"]),
        LinkCreated: single(without(schemas.LinkCreated, ["new_link"])),
        LinkList: single(schemas.LinkList)
      }
    }
  }
}
