import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Effect, Stream } from "effect"
import { IncomingMessage } from "node:http"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { Export } from "./Export.ts"
import type { CsvFile } from "./ExportCsv.ts"

/** A client that takes nothing of the file for this long loses the connection, and its export stops. */
const STALLED_CLIENT_MS = 60_000

/**
 * A CSV file as the answer, streamed with backpressure (a chunk is read from the database once the
 * client has taken the previous one). Once the answer has begun its status cannot change: a failure
 * then cuts the connection, so that the client sees an incomplete transfer instead of a file that
 * ends cleanly and lacks rows. (A GET that came with a chunked body was read ahead by the edge and
 * has no socket here: its export ends as the framework ends a failed stream.)
 */
const attachment = <E>(request: HttpServerRequest.HttpServerRequest, file: CsvFile<E, never>) => {
  const socket = request.source instanceof IncomingMessage ? request.source.socket : null
  socket?.setTimeout(STALLED_CLIENT_MS)
  const body = Stream.tapErrorCause(file.body, (cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.void
      : Effect.zipRight(
          Effect.logError(`export ${file.name} failed after its answer began; connection cut`, cause),
          Effect.sync(() => socket?.destroy())
        )
  )
  return HttpServerResponse.stream(body, {
    contentType: "text/csv; charset=utf-8",
    headers: { "content-disposition": `attachment; filename="${file.name}"`, "cache-control": "no-store" }
  })
}

export const ExportHttpLive = HttpApiBuilder.group(Api, "export", (handlers) =>
  Effect.gen(function* () {
    const exports = yield* Export
    return handlers
      .handle("links_csv", ({ path, request }) =>
        Effect.flatMap(CurrentUser, (caller) => exports.links(caller, path.domain_id)).pipe(
          Effect.map((file) => attachment(request, file))
        )
      )
      .handle("clicks_csv", ({ path, urlParams, request }) =>
        Effect.flatMap(CurrentUser, (caller) => exports.clicks(caller, path.domain_id, urlParams)).pipe(
          Effect.map((file) => attachment(request, file))
        )
      )
  })
)
