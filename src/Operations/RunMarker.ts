import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { isRunning } from "../Clicks/ClickSpill.ts"

const FILE = /^running-(\d+)\.json$/

export interface EarlierRun {
  readonly pid: number
  readonly startedAt: string
}

/**
 * `DATA_DIR/running-<pid>.json` exists while a process runs and is removed when it stops cleanly, so
 * the next start can tell which earlier runs ended without a clean stop (SIGKILL, a crash, a power
 * cut). One file per process, because instances on PostgreSQL may share a data folder.
 */
export const runMarker = (dataDir: string) => {
  const own = join(dataDir, `running-${process.pid}.json`)

  /** Writes this run's marker and returns (removing their markers) the earlier runs that did not stop cleanly. */
  const claim = async (): Promise<ReadonlyArray<EarlierRun>> => {
    await mkdir(dataDir, { recursive: true, mode: 0o700 })
    const unclean: Array<EarlierRun> = []
    for (const name of await readdir(dataDir)) {
      const match = FILE.exec(name)
      if (match === null) continue
      const pid = Number(match[1])
      if (pid === process.pid || isRunning(pid)) continue
      const file = join(dataDir, name)
      const startedAt = await readFile(file, "utf8").then(
        (text) => {
          const value: unknown = JSON.parse(text)
          return typeof value === "object" && value !== null && "startedAt" in value && typeof value.startedAt === "string"
            ? value.startedAt
            : "unknown"
        },
        () => "unknown"
      )
      unclean.push({ pid, startedAt })
      await rm(file, { force: true })
    }
    await writeFile(own, JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() }), { mode: 0o600 })
    return unclean
  }

  const release = () => rm(own, { force: true })

  return { claim, release }
}
