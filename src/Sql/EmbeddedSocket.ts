import { Effect } from "effect"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"

/** Where the process holding the embedded database says which folder its socket is in. */
const socketFile = (dataDir: string) => resolve(dataDir, "pglite.socket")

/** Names `socketDir` in `dataDir` for the life of the scope, so that the admin CLI can connect while the server runs. */
export const announceSocket = (dataDir: string, socketDir: string) =>
  Effect.acquireRelease(
    Effect.sync(() => writeFileSync(socketFile(dataDir), `${socketDir}\n`, { mode: 0o600 })),
    () => Effect.sync(() => rmSync(socketFile(dataDir), { force: true }))
  )

/** The socket folder the holder of the embedded database in `dataDir` announced, if any. */
export const announcedSocket = (dataDir: string): string | undefined => {
  try {
    const dir = readFileSync(socketFile(dataDir), "utf8").trim()
    return dir === "" ? undefined : dir
  } catch {
    return undefined
  }
}
