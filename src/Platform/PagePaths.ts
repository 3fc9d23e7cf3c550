/** The pages served beside the HttpApi's endpoints (`App.ts`): the docs UIs and the OpenAPI documents. */
export const DOCS_PATH = "/api/docs"
export const V3_DOCS_PATH = "/api/v3/docs"
export const OPENAPI_PATH = "/api/v4/openapi.json"
/** Version 4's document mapped to version 3's by `V3/V3Adapter.ts`. */
export const V3_OPENAPI_PATH = "/api/v3/openapi.json"

/** Their paths, each its own route template (they take no parameters). */
export const PAGE_PATHS: ReadonlySet<string> = new Set([DOCS_PATH, V3_DOCS_PATH, OPENAPI_PATH, V3_OPENAPI_PATH])
