import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Option } from "effect"

/** The user whose token authenticated each API request, for its access log line. */
const users = new WeakMap<object, number>()

const sourceOf = (request: HttpServerRequest.HttpServerRequest) =>
  typeof request.source === "object" && request.source !== null ? request.source : undefined

/** Records `userId` as the caller of the request being served, if any. */
export const noteRequestUser = (userId: number) =>
  Effect.map(Effect.serviceOption(HttpServerRequest.HttpServerRequest), (request) => {
    const source = Option.isSome(request) ? sourceOf(request.value) : undefined
    if (source !== undefined) users.set(source, userId)
  })

/** The user recorded for `request`, if its token was accepted. */
export const requestUserOf = (request: HttpServerRequest.HttpServerRequest): number | undefined => {
  const source = sourceOf(request)
  return source === undefined ? undefined : users.get(source)
}
