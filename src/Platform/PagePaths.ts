/** The pages served beside the HttpApi's endpoints (`App.ts`): the docs UIs and the OpenAPI document. */
export const DOCS_PATH = "/api/docs"
export const V3_DOCS_PATH = "/api/v3/docs"
/** Version 3's document is this one mapped by `V3/V3Adapter.ts`, at `/api/v3/openapi.json`. */
export const OPENAPI_PATH = "/api/v4/openapi.json"

/** Their paths, each its own route template (they take no parameters). */
export const PAGE_PATHS: ReadonlyArray<string> = [DOCS_PATH, V3_DOCS_PATH, OPENAPI_PATH]
