/**
 * The HTTP API's definition, for `HttpApiClient.make(Api, { baseUrl })`: every operation of version 4
 * and the probes, their schemas and the errors each answers. Importing it starts nothing.
 */
export { Api } from "../Api.ts"
export * from "./Schemas.ts"
export * from "./Errors.ts"
