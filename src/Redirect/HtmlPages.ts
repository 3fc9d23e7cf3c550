import { createHash } from "node:crypto"
import type { ServerResponse } from "node:http"

/** Text made safe for an HTML text node or a double- or single-quoted attribute value. */
export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;"))

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem;line-height:1.5}" +
  "label,input,button{display:block;width:100%;box-sizing:border-box;font-size:1rem}" +
  "input{margin:.25rem 0 1rem;padding:.5rem}button{padding:.5rem}" +
  "p[role=alert]{color:#a00;font-weight:bold}"

/**
 * Nothing but this page's own inline style may load: no scripts, images, frames or other origins; the
 * form posts back to this origin only.
 */
const PAGE_POLICY =
  `default-src 'none'; style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'; ` +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy": PAGE_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

/** The password form. Posts to the page's own URL; the destination is never part of it. */
export const passwordPage = (message: string | undefined) =>
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>Password required</title><style>${STYLE}</style></head>
<body><main><h1>This link is protected</h1>
${message === undefined ? "" : `<p role="alert">${escapeHtml(message)}</p>\n`}<form method="post">
<label for="password">Password</label>
<input id="password" name="password" type="password" required autofocus autocomplete="current-password" maxlength="1024">
<button type="submit">Continue</button>
</form></main></body></html>
`

export interface Preview {
  readonly title: string | null
  readonly description: string | null
  readonly image: string | null
}

/** Open Graph and Twitter card tags for a link-preview crawler, and a refresh to `destination`. */
export const previewPage = (preview: Preview, shortUrl: string, destination: string) => {
  const tags: Array<[string, string, string]> = [["property", "og:url", shortUrl]]
  if (preview.title !== null) tags.push(["property", "og:title", preview.title], ["name", "twitter:title", preview.title])
  if (preview.description !== null) {
    tags.push(["property", "og:description", preview.description], ["name", "twitter:description", preview.description])
  }
  if (preview.image !== null) tags.push(["property", "og:image", preview.image], ["name", "twitter:image", preview.image])
  tags.push(["name", "twitter:card", preview.image === null ? "summary" : "summary_large_image"])
  const meta = tags.map(([kind, name, value]) => `<meta ${kind}="${name}" content="${escapeHtml(value)}">`).join("\n")
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(preview.title ?? shortUrl)}</title>
${meta}
<meta http-equiv="refresh" content="0;url=${escapeHtml(destination)}">
</head><body><a href="${escapeHtml(destination)}">${escapeHtml(preview.title ?? destination)}</a></body></html>
`
}

/** An HTML page of ours, without its body for HEAD. */
export const sendPage = (res: ServerResponse, status: number, html: string, head: boolean, extra: Record<string, string> = {}) => {
  res.writeHead(status, { ...PAGE_HEADERS, ...extra, "content-length": String(Buffer.byteLength(html)) })
  res.end(head ? undefined : html)
}
