import { createReadStream } from "node:fs"
import { mkdir, open, readdir, rm } from "node:fs/promises"
import { join } from "node:path"
import { createInterface } from "node:readline"
import type { ClickRow } from "./ClickRepo.ts"

const FILE = /^clicks-spill-(\d+)\.ndjson$/

/** Whether a process with this id exists (one we may not signal counts too). */
export const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error instanceof Error && "code" in error && error.code === "EPERM"
  }
}

/**
 * Clicks that could not be written, one JSON line each, in `<dir>/clicks-spill-<pid>.ndjson`. A file
 * is replayed by its own process, or by any process once its writer is gone; a line cut short by a
 * crash is skipped.
 */
export const clickSpill = (dir: string) => {
  const own = join(dir, `clicks-spill-${process.pid}.ndjson`)

  /** Appends the rows and flushes them to disk before returning. */
  const append = async (rows: ReadonlyArray<ClickRow>) => {
    if (rows.length === 0) return
    await mkdir(dir, { recursive: true, mode: 0o700 })
    const handle = await open(own, "a", 0o600)
    try {
      await handle.write(rows.map((row) => `${JSON.stringify(row)}\n`).join(""))
      await handle.datasync()
    } finally {
      await handle.close()
    }
  }

  /** Files this process may replay now. */
  const replayable = async (): Promise<ReadonlyArray<string>> => {
    const names = await readdir(dir).catch(() => [])
    return names.flatMap((name) => {
      const match = FILE.exec(name)
      if (match === null) return []
      const pid = Number(match[1])
      return pid === process.pid || !isRunning(pid) ? [join(dir, name)] : []
    })
  }

  /** The rows of `file`, `chunkSize` at a time. */
  async function* read(file: string, chunkSize: number): AsyncGenerator<ReadonlyArray<ClickRow>> {
    const lines = createInterface({ input: createReadStream(file, "utf8"), crlfDelay: Infinity })
    let chunk: Array<ClickRow> = []
    for await (const line of lines) {
      const row = parseRow(line)
      if (row === undefined) continue
      chunk.push(row)
      if (chunk.length >= chunkSize) {
        yield chunk
        chunk = []
      }
    }
    if (chunk.length > 0) yield chunk
  }

  const remove = (file: string) => rm(file, { force: true })

  /** How many clicks the files this process may replay now hold. */
  const pending = async () => {
    let count = 0
    for (const file of await replayable()) {
      for await (const chunk of read(file, 10_000)) count += chunk.length
    }
    return count
  }

  return { append, replayable, read, remove, pending }
}

const parseRow = (line: string): ClickRow | undefined => {
  try {
    const value: unknown = JSON.parse(line)
    return isClickRow(value) ? value : undefined
  } catch {
    return undefined
  }
}

const isClickRow = (value: unknown): value is ClickRow =>
  typeof value === "object" &&
  value !== null &&
  "id" in value &&
  typeof value.id === "string" &&
  "at" in value &&
  typeof value.at === "string" &&
  "link_id" in value &&
  typeof value.link_id === "number" &&
  "domain_id" in value &&
  typeof value.domain_id === "number" &&
  "ip_hash" in value &&
  typeof value.ip_hash === "string"
