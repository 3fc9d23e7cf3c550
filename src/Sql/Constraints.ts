import type { SqlError } from "@effect/sql/SqlError"

/** Whether a statement was refused by the unique index `name` (SQLSTATE 23505, unique_violation). */
export const violatesUniqueIndex = (error: SqlError, name: string): boolean => {
  const cause: unknown = error.cause
  return (
    typeof cause === "object" && cause !== null && "code" in cause && cause.code === "23505" && "constraint" in cause && cause.constraint === name
  )
}
