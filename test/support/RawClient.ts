import { Effect } from "effect"
import { type IncomingHttpHeaders, request as httpRequest } from "node:http"
import { connect } from "node:net"
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

/**
 * Bytes written as they are on a connection of their own (two Host fields, an absolute-form target:
 * what no HTTP client sends): everything the server sent until it closed the connection, or the
 * timeout. Send `Connection: close` to get the answer at once.
 */
export const rawExchange = (text: string, timeoutMs = 5_000) =>
  Effect.flatMap(BaseUrl, (base) =>
    Effect.async<string>((resume) => {
      const { hostname, port } = new URL(base)
      const socket = connect(Number(port), hostname)
      let received = ""
      let settled = false
      const done = () => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        socket.destroy()
        resume(Effect.succeed(received))
      }
      const timer = setTimeout(done, timeoutMs)
      socket.setEncoding("utf8")
      socket.on("data", (chunk: string) => (received += chunk))
      socket.once("close", done)
      socket.once("error", done)
      socket.write(text)
      return Effect.sync(() => socket.destroy())
    })
  )

/** The status code of a raw answer, NaN when there is none. */
export const rawStatus = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? NaN)
