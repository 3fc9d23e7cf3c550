import { Ajv2020 } from "ajv/dist/2020.js"
import { isPlainObject } from "../../src/Links/InputValues.ts"

type Json = Readonly<Record<string, unknown>>

const object = (value: unknown): Json => (isPlainObject(value) ? value : {})

/**
 * The JSON type of every field name the real API's OpenAPI document ("Version 4 of the BL.INK API",
 * 4.0.0) gives one, across its operations: what a client generated from it expects to read.
 */
export const REAL_API_TYPES: Readonly<Record<string, "integer" | "string" | "boolean" | "array" | "object">> = {
  // Links (E4, E6, E11-E13, E16)
  id: "integer",
  url: "string",
  alias: "string",
  short_link: "string",
  redirect_url: "string",
  created: "integer",
  modified: "integer",
  user_id: "integer",
  domain_id: "integer",
  click_count: "integer",
  notify_on_click: "string",
  notes: "string",
  redirect_type: "integer",
  status: "string",
  template_id: "integer",
  delete_on: "integer",
  archive_on: "integer",
  tags: "array",
  groups: "array",
  lifetime_count: "integer",
  last_clicked: "string",
  new_link: "integer",
  // Domains (E3, E7-E10)
  domain: "string",
  default: "boolean",
  type: "string",
  url_404: "string",
  homepage: "string",
  has_ssl: "boolean",
  // Users (U1), groups (G1), tags (T1, T2), UTM templates (E15)
  first_name: "string",
  last_name: "string",
  email_address: "string",
  nickname: "string",
  role: "string",
  domains: "array",
  name: "string",
  is_global: "string",
  users: "array",
  shared: "boolean",
  fields: "array",
  label: "string",
  field_code: "string",
  required: "boolean",
  // Login (E1, E2)
  success: "integer",
  user: "object",
  email: "string",
  access_token: "string",
  expires: "integer",
  // Lists and reports
  objects: "array",
  meta: "object",
  links: "object",
  current_page: "integer",
  previous_page: "integer",
  next_page: "integer",
  last_page: "integer",
  from: "integer",
  to: "integer",
  per_page: "integer",
  total: "integer",
  count: "integer",
  path: "string",
  first: "string",
  last: "string",
  previous: "string",
  next: "string",
  date: "string",
  unix_date: "integer",
  scan_count: "integer",
  country: "string",
  region: "string",
  city: "string",
  device: "string",
  referrer: "string",
  code: "integer",
  message: "string",
  description: "string"
}

/**
 * Where `null` may stand for a value: pagination ends, an empty page, a link never clicked, an
 * unknown place of a click. Anywhere else an unset value is left out.
 */
export const NULL_ALLOWED = new Set(["previous_page", "next_page", "from", "to", "previous", "next", "last_clicked", "country", "region", "city"])

/**
 * Extension fields whose name the real API gives another type (array indexes written `[]`): a
 * webhook delivery attempt's `status` is the receiver's HTTP status, not a link's status. Nulls are
 * still refused there.
 */
const EXTENSION_TYPES: Record<string, string> = { "$.objects[].attempts[].status": "integer" }

const jsonType = (value: unknown) =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "array"
      : typeof value === "number"
        ? Number.isInteger(value)
          ? "integer"
          : "number"
        : typeof value

/** Every field of a JSON answer, however deep, whose value is null where it may not be or of another type than the real API's. */
export const typeProblems = (answer: unknown, path = "$"): ReadonlyArray<string> => {
  if (Array.isArray(answer)) return answer.flatMap((item, index) => typeProblems(item, `${path}[${index}]`))
  if (!isPlainObject(answer)) return []
  return Object.entries(answer).flatMap(([key, value]) => {
    const here = `${path}.${key}`
    const expected = EXTENSION_TYPES[here.replace(/\[\d+\]/g, "[]")] ?? REAL_API_TYPES[key]
    const actual = jsonType(value)
    const problems =
      actual === "null"
        ? NULL_ALLOWED.has(key)
          ? []
          : [`${here} is null`]
        : expected !== undefined && actual !== expected
          ? [`${here} is ${actual}, the real API's document says ${expected}`]
          : []
    return [...problems, ...typeProblems(value, here)]
  })
}

/**
 * A schema of the document with its local references made references into the document added as
 * `id`, and without `$id`s (the generator marks every unknown value `/schemas/unknown`, which a
 * validator would take for one schema defined many times).
 */
const rebased = (schema: unknown, id: string): unknown => {
  if (Array.isArray(schema)) return schema.map((item) => rebased(item, id))
  if (!isPlainObject(schema)) return schema
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => key !== "$id")
      .map(([key, value]) => [key, key === "$ref" && typeof value === "string" && value.startsWith("#") ? `${id}${value}` : rebased(value, id)])
  )
}

/** The path templates of an OpenAPI document and the operation a request path falls on (literal segments first). */
export const operationOf = (document: unknown, method: string, path: string): string | undefined => {
  const templates = Object.keys(object(object(document).paths)).filter((template) => method.toLowerCase() in object(object(object(document).paths)[template]))
  const matching = templates.filter((template) => new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(path))
  return matching.sort((a, b) => a.split("{").length - b.split("{").length)[0]
}

/** A validator of successful answers against the OpenAPI document(s) the service serves. */
export const answerValidator = (documents: Readonly<Record<string, unknown>>) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  for (const [id, document] of Object.entries(documents)) ajv.addSchema(object(rebased(document, id)), id)
  return (id: string, method: string, path: string, status: number, answer: unknown): ReadonlyArray<string> => {
    const document = documents[id]
    const template = operationOf(document, method, path)
    if (template === undefined) return [`${method} ${path} is no operation of the ${id} document`]
    const response = object(object(object(object(object(document).paths)[template])[method.toLowerCase()]).responses)[String(status)]
    const schema = object(object(object(response).content)["application/json"]).schema
    if (schema === undefined) return [`${method} ${template} documents no JSON answer with status ${status}`]
    const validate = ajv.compile(object(rebased(schema, id)))
    if (validate(answer)) return []
    return (validate.errors ?? []).map((error) => `${method} ${template}: ${error.instancePath || "$"} ${error.message ?? ""} ${JSON.stringify(error.params)}`)
  }
}
