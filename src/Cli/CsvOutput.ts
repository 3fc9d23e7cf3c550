import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Stream } from "effect"
import { open, rename, rm } from "node:fs/promises"
import { AdminError } from "../Accounts/AdminError.ts"
import type { CsvFile } from "../Export/ExportCsv.ts"
import type { Outcome } from "./Outcome.ts"

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** Each piece once the previous one is written (a slow pipe holds the export back, not memory). */
const toStdout = (body: Stream.Stream<Uint8Array, SqlError>) =>
  Effect.acquireUseRelease(
    // Write errors (a closed pipe) come back through write's callback; unheard, the event would throw.
    Effect.sync(() => {
      const ignore = () => undefined
      process.stdout.on("error", ignore)
      return ignore
    }),
    () =>
      Stream.runForEach(body, (piece) =>
        Effect.async<void, AdminError>((resume) => {
          process.stdout.write(piece, (error) =>
            resume(error === null || error === undefined ? Effect.void : Effect.fail(new AdminError({ message: `cannot write to standard output: ${reason(error)}` })))
          )
        })
      ),
    (ignore) => Effect.sync(() => process.stdout.off("error", ignore))
  )

/**
 * The file written as `<file>.partial` (readable by its owner only) and renamed to `file` once
 * complete: a failed export never leaves a file that looks complete.
 */
const toFile = (file: string, body: Stream.Stream<Uint8Array, SqlError>) => {
  const partial = `${file}.partial`
  const failed = (error: unknown) => new AdminError({ message: `cannot write ${file}: ${reason(error)}` })
  const written = Effect.acquireUseRelease(
    Effect.tryPromise({ try: () => open(partial, "w", 0o600), catch: failed }),
    (handle) => Stream.runForEach(body, (piece) => Effect.tryPromise({ try: () => handle.write(piece), catch: failed })),
    (handle) => Effect.promise(() => handle.close())
  )
  return written.pipe(
    Effect.zipRight(Effect.tryPromise({ try: () => rename(partial, file), catch: failed })),
    Effect.tapError(() => Effect.promise(() => rm(partial, { force: true })))
  )
}

const PRINTED: Outcome = { json: {}, text: "", printed: true }

/**
 * An export written to `output`, or to standard output when there is none (then the CSV is all the
 * command prints there). Its size is the command's answer.
 */
export const writeCsv = (output: string | undefined, file: CsvFile<SqlError, never>): Effect.Effect<Outcome, AdminError | SqlError> =>
  output === undefined
    ? Effect.as(toStdout(file.body), PRINTED)
    : Effect.suspend(() => {
        let bytes = 0
        const body = Stream.tap(file.body, (piece) => Effect.sync(() => (bytes += piece.byteLength)))
        return Effect.map(toFile(output, body), () => ({ json: { file: output, bytes }, text: `wrote ${file.name} to ${output} (${bytes} bytes)` }))
      })
