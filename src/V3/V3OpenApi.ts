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

/**
 * The version 3 OpenAPI document, derived from version 4's by the differences of version 3: the
 * paths under /api/v3, links without notify_on_click (one object on create, get, update and by
 * alias), domains with six fields, create without three inputs, pages of 20.
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
  const createBody = object(object(object(object(create.post).requestBody).content)["application/json"])
  const createPost = {
    ...object(create.post),
    requestBody: {
      ...object(object(create.post).requestBody),
      content: {
        "application/json": { ...createBody, schema: without(createBody.schema, ["rand_alias_length", "override_404_check", "notify_on_click"]) }
      }
    }
  }
  const single = (schema: unknown) => ({ ...object(schema), properties: { ...object(object(schema).properties), objects: LINK_REF } })
  return {
    ...doc,
    info: {
      ...object(doc.info),
      version: "3",
      description: "Version 3 of the API: the same paths as version 4 under /api/v3, with its differences (pages of 20)."
    },
    paths: { ...paths, "/api/v3/{domain_id}/links": { ...create, post: createPost } },
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
