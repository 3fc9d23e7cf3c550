import { Data } from "effect"

/** A refused administrative operation, with the reason an operator reads. */
export class AdminError extends Data.TaggedError("AdminError")<{ readonly message: string }> {}
