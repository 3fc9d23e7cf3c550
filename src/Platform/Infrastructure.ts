import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, ParseResult } from "effect"

type InfrastructureFailure = SqlError | ParseResult.ParseError | Cause.NoSuchElementException

/**
 * Database failures and rows that do not decode are not the client's doing: they become defects,
 * which the API edge answers with 503 10902 or 500 10999 (`ApiMiddleware.ts`).
 */
export const orDieOnInfrastructure = <A, E, R>(
  self: Effect.Effect<A, E | InfrastructureFailure, R>
): Effect.Effect<A, Exclude<E, InfrastructureFailure>, R> =>
  Effect.catchIf(
    self,
    (error): error is InfrastructureFailure =>
      error instanceof SqlError || ParseResult.isParseError(error) || Cause.isNoSuchElementException(error),
    Effect.die
  )
