import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

const require = createRequire(import.meta.url)

let scalarScript: { readonly bytes: Buffer; readonly hash: string } | undefined

/** A script's CSP source: `'sha256-...'` of the text between its tags, as browsers hash it. */
const scriptHash = (text: string | Buffer) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`

/**
 * The Scalar API reference bundle (3.4 MB of JavaScript) that `@effect/platform` ships, loaded on
 * the first docs request: loaded at start, it stayed in the main thread's heap for nothing, and
 * `HttpApiScalar.layer` kept a whole page around it per docs path besides. The bundle sits in a
 * module the package does not export, beside the exported `HttpApiScalar`.
 */
const scalar = () => {
  if (scalarScript === undefined) {
    const file = join(dirname(require.resolve("@effect/platform/HttpApiScalar")), "internal", "httpApiScalar.js")
    const loaded: unknown = require(file)
    if (typeof loaded !== "object" || loaded === null || !("javascript" in loaded) || typeof loaded.javascript !== "string") {
      throw new Error(`no Scalar bundle in ${file}`)
    }
    // Encoded and hashed once: a page is then a copy of bytes, not 3.4 million characters encoded again.
    const bytes = Buffer.from(loaded.javascript, "utf8")
    scalarScript = { bytes, hash: scriptHash(bytes) }
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

/**
 * The docs page's policy: only its two inline scripts run (by hash, so nothing injected into the page
 * would), it calls only its own origin, and no other site may frame it. Styles stay 'unsafe-inline'
 * because Scalar sets style elements and attributes as it renders, which no hash can name; the
 * `new Function` it tries once is only a feature test, caught, so no 'unsafe-eval'.
 */
const policyOf = (scriptHashes: ReadonlyArray<string>) =>
  [
    "default-src 'none'",
    `script-src ${scriptHashes.join(" ")} 'wasm-unsafe-eval'`,
    "style-src 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")

/** The page of `HttpApiScalar.layer`, made per request: nothing of it is kept between docs visits but the bundle. */
const page = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(api: HttpApi.HttpApi<Id, Groups, E, R>, configuration: object) => {
  const spec = OpenApi.fromApi(api)
  const description = spec.info.description
  const meta = description === undefined || description === ""
    ? ""
    : `<meta name="description" content="${escapeAttribute(description)}"/>\n    <meta name="og:description" content="${escapeAttribute(description)}"/>`
  const configure = `
      document.getElementById('api-reference').dataset.configuration = JSON.stringify(${scriptJson({ _integration: "html", ...configuration })})
    `
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
    <script>${configure}</script>
    <script>`
  const bundle = scalar()
  return {
    body: Buffer.concat([Buffer.from(head, "utf8"), bundle.bytes, Buffer.from("</script>\n  </body>\n</html>", "utf8")]),
    policy: policyOf([scriptHash(configure), bundle.hash])
  }
}

/**
 * GET `path`: the Scalar docs UI of `api`, its script inline (nothing loaded from a CDN, no web fonts),
 * with a Content-Security-Policy, no MIME sniffing and no framing (3.4 MB of third-party code runs here).
 */
export const docsPageLayer = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(path: `/${string}`, api: HttpApi.HttpApi<Id, Groups, E, R>) =>
  HttpApiBuilder.Router.use((router) =>
    router.get(
      path,
      Effect.sync(() => {
        const { body, policy } = page(api, { withDefaultFonts: false })
        return HttpServerResponse.uint8Array(body, {
          contentType: "text/html; charset=utf-8",
          headers: { "content-security-policy": policy, "x-content-type-options": "nosniff", "x-frame-options": "DENY" }
        })
      })
    )
  )
