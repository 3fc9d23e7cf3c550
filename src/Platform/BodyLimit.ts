import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Option } from "effect"
import { IncomingMessage } from "node:http"
import { ApiError } from "./ApiError.ts"

export const MAX_BODY_BYTES = 64 * 1024

const tooLarge = () => ApiError.of(10152, String(MAX_BODY_BYTES))

/**
 * Reads a body of unknown length up to `cap` bytes. Past the cap it stops keeping what arrives and
 * lets the rest drain (`None`), so the connection survives to carry the 413.
 */
const readCapped = (source: IncomingMessage, cap: number) =>
  Effect.async<Option.Option<Buffer>, ApiError>((resume) => {
    const chunks: Array<Buffer> = []
    let bytes = 0
    const detach = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onBroken)
      source.off("close", onBroken)
    }
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes <= cap) return void chunks.push(chunk)
      detach()
      source.resume()
      resume(Effect.succeed(Option.none()))
    }
    const onEnd = () => {
      detach()
      resume(Effect.succeed(Option.some(Buffer.concat(chunks))))
    }
    const onBroken = () => {
      detach()
      resume(Effect.fail(ApiError.of(10153, "the request body could not be read")))
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onBroken)
    source.once("close", onBroken)
    return Effect.sync(detach)
  })

/** The same request with its body already read into memory. */
export const withBody = (request: HttpServerRequest.HttpServerRequest, method: string, body: Buffer) => {
  const bodiless = method === "GET" || method === "HEAD"
  const web = new Request("http://body.invalid/", { method, ...(bodiless ? {} : { body }) })
  return HttpServerRequest.fromWeb(web).modify({
    url: request.url,
    headers: request.headers,
    ...Option.match(request.remoteAddress, { onNone: () => ({}), onSome: (remoteAddress) => ({ remoteAddress }) })
  })
}

/**
 * The 64 KiB body cap (413 10152 beyond it), enforced before the API reads a body: a declared Content-Length
 * over it is refused without reading anything. A body of unknown length (chunked) is read here, since
 * the framework's own cap destroys the request stream, and the connection with it, so the client
 * would never see the 413. Answers the request to hand on.
 */
export const limitBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const declared = request.headers["content-length"]
    if (declared !== undefined) {
      const length = Number(declared)
      if (!Number.isFinite(length) || length > MAX_BODY_BYTES) return yield* tooLarge()
      return request
    }
    const source = request.source
    if (request.headers["transfer-encoding"] === undefined || !(source instanceof IncomingMessage)) return request
    const body = yield* readCapped(source, MAX_BODY_BYTES)
    if (Option.isNone(body)) return yield* tooLarge()
    // Methods `Request` refuses (TRACE) have no route: the original request answers them with a 404.
    return yield* Effect.try(() => withBody(request, request.method, body.value)).pipe(
      Effect.orElseSucceed(() => request)
    )
  })
