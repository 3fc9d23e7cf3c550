import { Data, Effect } from "effect"
import { chmodSync, lstatSync, mkdirSync, readdirSync } from "node:fs"
import { join } from "node:path"

/** DATA_DIR cannot be made private to this process's user. */
export class DataDirRefused extends Data.TaggedError("DataDirRefused")<{ readonly message: string }> {}

/** Every directory under `dir` made 0700 and every file 0600 (symbolic links left as they are). */
const tighten = (dir: string): void => {
  chmodSync(dir, 0o700)
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) tighten(path)
    else if (entry.isFile()) chmodSync(path, 0o600)
  }
}

/**
 * DATA_DIR holds the embedded database (e-mails, password hashes), the token secret and spilled
 * clicks: it is created 0700, and an existing one that group or others may enter is tightened, with
 * everything in it, once. A folder of another user is refused: this process could not keep it private.
 */
export const privateDataDir = (dir: string) =>
  Effect.try({
    try: () => {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      const stat = lstatSync(dir)
      if (!stat.isDirectory()) throw new Error("it is not a directory")
      const uid = process.getuid?.()
      if (uid !== undefined && uid !== 0 && stat.uid !== uid) {
        throw new Error(`it belongs to user ${stat.uid}, not to this process's user ${uid}; give it to ${uid} or choose another DATA_DIR`)
      }
      if ((stat.mode & 0o077) === 0) return false
      tighten(dir)
      return true
    },
    catch: (error) =>
      new DataDirRefused({ message: `DATA_DIR ${dir} cannot be kept private: ${error instanceof Error ? error.message : String(error)}` })
  }).pipe(
    Effect.tap((tightened) =>
      tightened ? Effect.logWarning(`DATA_DIR ${dir} was open to other users: it and everything in it are now private to this user (0700/0600)`) : Effect.void
    ),
    Effect.asVoid
  )
