import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { codesOfSchema } from "../src/Platform/ApiError.ts"
import { ErrorCatalogue, isErrorCode } from "../src/Platform/ErrorCatalogue.ts"
import { isPlainObject } from "../src/Links/InputValues.ts"
import { call } from "./support/Http.ts"
import { openApiDocuments } from "./support/OpenApiShapes.ts"
import { TestServer } from "./support/TestServer.ts"
import { BODY_OPERATIONS } from "./support/ApiContract.ts"

type Json = Readonly<Record<string, unknown>>

const object = (value: unknown): Json => (isPlainObject(value) ? value : {})

interface Operation {
  readonly id: string
  readonly path: string
  readonly method: string
  readonly operation: Json
}

const operationsOf = (document: unknown): ReadonlyArray<Operation> =>
  Object.entries(object(object(document).paths)).flatMap(([path, item]) =>
    Object.entries(object(item)).map(([method, operation]) => ({ id: `${method.toUpperCase()} ${path}`, path, method, operation: object(operation) }))
  )

const responsesOf = (operation: Operation) => object(operation.operation.responses)

const errorStatuses = (operation: Operation) =>
  Object.keys(responsesOf(operation))
    .filter((status) => Number(status) >= 400)
    .sort()

const codesAt = (document: unknown, operation: Operation, status: string) =>
  codesOfSchema(object(object(object(document).components).schemas), object(object(object(responsesOf(operation)[status]).content)["application/json"]).schema)


const DOCUMENTS = openApiDocuments()

describe("the OpenAPI documents", () => {
  for (const [version, document] of Object.entries(DOCUMENTS)) {
    const prefix = version === "v4" ? "/api/v4" : "/api/v3"
    const operations = operationsOf(document)

    it(`${version}: every operation has a summary, integer path ids and a server to call`, () => {
      expect(operations.length).toBeGreaterThan(30)
      expect(operations.filter(({ operation }) => typeof operation.summary !== "string" || operation.summary === "").map(({ id }) => id)).toEqual([])
      const pathParameters = operations.flatMap(({ id, operation }) =>
        (Array.isArray(operation.parameters) ? operation.parameters : []).filter((parameter) => object(parameter).in === "path").map((parameter) => ({ id, parameter: object(parameter) }))
      )
      expect(pathParameters.length).toBeGreaterThan(30)
      for (const { id, parameter } of pathParameters) expect(object(parameter.schema).type, `${id} ${String(parameter.name)}`).toBe("integer")
      const search = operations.find(({ id }) => id === `GET ${prefix}/{domain_id}/links`)
      const queryTypes = Object.fromEntries(
        (Array.isArray(search?.operation.parameters) ? search.operation.parameters : []).map((parameter) => [object(parameter).name, object(object(parameter).schema).type])
      )
      expect(queryTypes).toMatchObject({ page: "integer", from_unix: "integer", to_unix: "integer", group_id: "integer", keyword: "string" })
      expect(Array.isArray(object(document).servers) && object(document).servers).toEqual([expect.objectContaining({ url: "/" })])
      expect(JSON.stringify(document)).not.toContain("HttpApiDecodeError")
    })

    it(`${version}: each error response names its catalogue codes, in its schema, its description and x-error-codes`, () => {
      for (const operation of operations) {
        for (const status of errorStatuses(operation)) {
          const response = object(responsesOf(operation)[status])
          const listed = codesAt(document, operation, status)
          const context = `${operation.id} ${status}`
          expect(listed.length, context).toBeGreaterThan(0)
          expect(response["x-error-codes"], context).toEqual(listed)
          for (const code of listed) {
            expect(isErrorCode(code), `${context}: ${code}`).toBe(true)
            if (isErrorCode(code)) expect(String(response.description), context).toContain(`${code} (${ErrorCatalogue[code].description})`)
          }
          if (status === "503") expect(object(object(response.headers)["Retry-After"]).schema, context).toEqual({ type: "integer", minimum: 1 })
        }
      }
    })

    it(`${version}: the statuses each operation can answer, and only those`, () => {
      for (const operation of operations) {
        const statuses = errorStatuses(operation)
        const api = operation.path.startsWith(prefix)
        const authenticated = Array.isArray(operation.operation.security) && operation.operation.security.length > 0
        const body = BODY_OPERATIONS.some((id) => `${operation.method.toUpperCase()} ${operation.path}` === id.replace(" ", ` ${prefix}`))
        const context = operation.id
        expect(codesAt(document, operation, "500"), context).toContain(10999)
        if (api) expect(codesAt(document, operation, "503"), context).toEqual(expect.arrayContaining([10900, 10902, 10903]))
        // /metrics takes METRICS_TOKEN as a bearer token of its own, not an access token.
        if (authenticated || operation.path === "/metrics") expect(codesAt(document, operation, "401"), context).toEqual([10000])
        else expect(statuses.includes("401") ? codesAt(document, operation, "401") : [10001], context).toEqual([10001])
        if (body) {
          expect(codesAt(document, operation, "413"), context).toEqual([10152])
          expect(codesAt(document, operation, "408"), context).toEqual([10154])
          expect(codesAt(document, operation, "400"), context).toContain(10153)
        } else {
          expect(statuses, context).not.toContain("413")
          expect(statuses, context).not.toContain("408")
        }
      }
      const byId = operations.find(({ id }) => id === `GET ${prefix}/domains/{domain_id}`)!
      expect(errorStatuses(byId)).toEqual(["401", "404", "500", "503"])
      const revoke = operations.find(({ id }) => id === `DELETE ${prefix}/access_token`)!
      expect(errorStatuses(revoke)).toEqual(["401", "500", "503"])
      const login = operations.find(({ id }) => id === `POST ${prefix}/validate_login`)!
      expect(codesAt(document, login, "503")).toEqual([10900, 10901, 10902, 10903])
      const qr = operations.find(({ id }) => id === `GET ${prefix}/{domain_id}/links/{link_id}/qr`)!
      expect(Object.keys(object(object(responsesOf(qr)["200"]).content)).sort()).toEqual(["application/postscript", "image/png", "image/svg+xml"])
    })
  }

  it("v4: the operational endpoints answer no rate limit; /readyz is 503 10902 or 10903", () => {
    const operations = operationsOf(DOCUMENTS.v4)
    const readyz = operations.find(({ id }) => id === "GET /readyz")!
    expect(codesAt(DOCUMENTS.v4, readyz, "503")).toEqual([10902, 10903])
    const healthz = operations.find(({ id }) => id === "GET /healthz")!
    expect(errorStatuses(healthz)).toEqual(["500"])
  })
})

describe("the served documents and docs pages", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("/api/v4/openapi.json and /api/v3/openapi.json are the documents made from the API definition (those linted)", () =>
      Effect.gen(function* () {
        expect((yield* call("GET", "/api/v4/openapi.json")).body).toEqual(DOCUMENTS.v4)
        expect((yield* call("GET", "/api/v3/openapi.json")).body).toEqual(DOCUMENTS.v3)
      })
    )

    it.effect("/api/v3/docs shows version 3's document, /api/docs version 4's, both with their script inline", () =>
      Effect.gen(function* () {
        for (const [path, document] of [["/api/docs", DOCUMENTS.v4], ["/api/v3/docs", DOCUMENTS.v3]] as const) {
          const reply = yield* call("GET", path)
          expect(reply.status, path).toBe(200)
          expect(reply.headers.get("content-type")).toMatch(/^text\/html/)
          expect(reply.text).not.toMatch(/<script[^>]*\ssrc=/i)
          const spec = /<script id="api-reference" type="application\/json">([\s\S]*?)<\/script>/.exec(reply.text)
          expect(JSON.parse(spec![1]!), path).toEqual(document)
        }
      })
    )
  })
})
