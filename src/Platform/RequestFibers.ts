import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, type Fiber, FiberId } from "effect"
import { IncomingMessage } from "node:http"

/** The fiber serving each API request of the Node listener, so that its deadline can stop the work. */
const serving = new WeakMap<IncomingMessage, Fiber.RuntimeFiber<unknown, unknown>>()

/** Records the current fiber as the one serving `request` (a request of another server is left out). */
export const registerServingFiber = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.withFiberRuntime<void>((fiber) => {
    if (request.source instanceof IncomingMessage) serving.set(request.source, fiber)
    return Effect.void
  })

/**
 * Interrupts the work of a request the listener has already answered: a statement it runs on
 * PostgreSQL is cancelled (`@effect/sql-pg` sends pg_cancel_backend) and its connection returns to
 * the pool.
 */
export const abandonRequest = (request: IncomingMessage) => {
  const fiber = serving.get(request)
  if (fiber === undefined) return
  serving.delete(request)
  fiber.unsafeInterruptAsFork(FiberId.none)
}
