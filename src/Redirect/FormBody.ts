import type { IncomingMessage } from "node:http"

/** A password form's body: a password of at most 1,024 characters, percent-encoded, and its name. */
export const MAX_FORM_BYTES = 4096

export type FormBody =
  | { readonly _tag: "Form"; readonly fields: URLSearchParams }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "NotAForm" }
  | { readonly _tag: "Broken" }

/** Reads an `application/x-www-form-urlencoded` body of at most `limit` bytes. */
export const readForm = (req: IncomingMessage, limit = MAX_FORM_BYTES): Promise<FormBody> => {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
  if (type !== "application/x-www-form-urlencoded") {
    req.resume()
    return Promise.resolve({ _tag: "NotAForm" })
  }
  const declared = Number(req.headers["content-length"] ?? 0)
  if (declared > limit) {
    req.resume()
    return Promise.resolve({ _tag: "TooLarge" })
  }
  return new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    const finish = (body: FormBody) => {
      if (done) return
      done = true
      resolve(body)
    }
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        finish({ _tag: "TooLarge" })
        req.resume()
      } else if (!done) chunks.push(chunk)
    })
    req.on("end", () => finish({ _tag: "Form", fields: new URLSearchParams(Buffer.concat(chunks).toString("utf8")) }))
    req.on("error", () => finish({ _tag: "Broken" }))
    req.on("aborted", () => finish({ _tag: "Broken" }))
  })
}
