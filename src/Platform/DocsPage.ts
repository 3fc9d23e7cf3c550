import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { Effect } from "effect"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

const require = createRequire(import.meta.url)

let scalarScript: Buffer | undefined

/**
 * The Scalar API reference bundle (3.4 MB of JavaScript) that `@effect/platform` ships, loaded on
 * the first docs request: loaded at start, it stayed in the main thread's heap for nothing, and
 * `HttpApiScalar.layer` kept a whole page around it per docs path besides. The bundle sits in a
 * module the package does not export, beside the exported `HttpApiScalar`.
 */
const scalar = (): Buffer => {
  if (scalarScript === undefined) {
    const file = join(dirname(require.resolve("@effect/platform/HttpApiScalar")), "internal", "httpApiScalar.js")
    const loaded: unknown = require(file)
    if (typeof loaded !== "object" || loaded === null || !("javascript" in loaded) || typeof loaded.javascript !== "string") {
      throw new Error(`no Scalar bundle in ${file}`)
    }
    // Encoded once: a page is then a copy of bytes, not 3.4 million characters encoded again.
    scalarScript = Buffer.from(loaded.javascript, "utf8")
  }
  return scalarScript
}

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
const escapeAttribute = (text: string) => escapeHtml(text).replace(/"/g, "&quot;").replace(/'/g, "&#39;")
/** JSON that cannot end its <script> element or break a JavaScript string. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/[\u2028\u2029]/g, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"))

/** The page of `HttpApiScalar.layer`, made per request: nothing of it is kept between docs visits but the bundle. */
const page = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(api: HttpApi.HttpApi<Id, Groups, E, R>, configuration: object) => {
  const spec = OpenApi.fromApi(api)
  const description = spec.info.description
  const meta = description === undefined || description === ""
    ? ""
    : `<meta name="description" content="${escapeAttribute(description)}"/>\n    <meta name="og:description" content="${escapeAttribute(description)}"/>`
  const head = `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(spec.info.title)}</title>
    ${meta}
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" type="application/json">
      ${scriptJson(spec)}
    </script>
    <script>
      document.getElementById('api-reference').dataset.configuration = JSON.stringify(${scriptJson({ _integration: "html", ...configuration })})
    </script>
    <script>`
  return Buffer.concat([Buffer.from(head, "utf8"), scalar(), Buffer.from("</script>\n  </body>\n</html>", "utf8")])
}

/** GET `path`: the Scalar docs UI of `api`, its script inline (nothing loaded from a CDN, no web fonts). */
export const docsPageLayer = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(path: `/${string}`, api: HttpApi.HttpApi<Id, Groups, E, R>) =>
  HttpApiBuilder.Router.use((router) =>
    router.get(path, Effect.sync(() => HttpServerResponse.uint8Array(page(api, { withDefaultFonts: false }), { contentType: "text/html; charset=utf-8" })))
  )
