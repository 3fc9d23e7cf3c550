import { Effect } from "effect"
import { type IncomingHttpHeaders, request as httpRequest } from "node:http"
import { BaseUrl } from "./TestServer.ts"

export type RawOutcome =
  | {
      readonly _tag: "Response"
      readonly status: number
      readonly headers: IncomingHttpHeaders
      readonly text: string
      /** From the start of the request to the complete response. */
      readonly ms: number
    }
  | { readonly _tag: "Closed"; readonly error: string; readonly ms: number }
  | { readonly _tag: "Timeout"; readonly ms: number }

export interface RawRequest {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  /** Body pieces, written one after the other (chunked when no Content-Length is given). */
  readonly chunks: ReadonlyArray<string | Buffer>
  /** false leaves the body unfinished: the server cannot have read all of it. */
  readonly end: boolean
  readonly timeoutMs?: number
}

/**
 * One request over its own connection with full control of headers and body (which `fetch` does not
 * give): the answer, or how the connection ended without one.
 */
export const rawRequest = (request: RawRequest) =>
  Effect.flatMap(BaseUrl, (base) =>
    Effect.async<RawOutcome>((resume) => {
      const started = performance.now()
      const elapsed = () => Math.round(performance.now() - started)
      let settled = false
      let timer: ReturnType<typeof setTimeout> | undefined
      const client = httpRequest(new URL(request.path, base), {
        method: request.method,
        headers: request.headers,
        agent: false
      })
      const settle = (outcome: RawOutcome) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resume(Effect.succeed(outcome))
        client.destroy()
      }
      timer = setTimeout(() => settle({ _tag: "Timeout", ms: elapsed() }), request.timeoutMs ?? 5_000)
      client.on("response", (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (text += chunk))
        response.on("end", () =>
          settle({ _tag: "Response", status: response.statusCode ?? 0, headers: response.headers, text, ms: elapsed() })
        )
        response.on("error", (error) => settle({ _tag: "Closed", error: error.message, ms: elapsed() }))
      })
      client.on("error", (error) => settle({ _tag: "Closed", error: error.message, ms: elapsed() }))
      client.flushHeaders()
      for (const chunk of request.chunks) client.write(chunk)
      if (request.end) client.end()
      return Effect.sync(() => settle({ _tag: "Timeout", ms: elapsed() }))
    })
  )

/** The parsed JSON body of a raw answer, or undefined. */
export const rawJson = (outcome: RawOutcome): unknown => {
  if (outcome._tag !== "Response") return undefined
  try {
    return JSON.parse(outcome.text)
  } catch {
    return undefined
  }
}
