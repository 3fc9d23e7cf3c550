import { readdir, readFile } from "node:fs/promises"
import { availableParallelism, totalmem } from "node:os"

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100

/** utime + stime and cutime + cstime (waited-for children) of a process, in ticks; undefined when it is gone. */
export const cpuTicksOf = async (pid: number) => {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined)
  if (stat === undefined) return undefined
  // Fields 14-17 of proc(5): utime, stime, cutime, cstime; the slice starts at field 3 (state).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const own = Number(fields[11]) + Number(fields[12])
  const children = Number(fields[13]) + Number(fields[14])
  return Number.isFinite(own) && Number.isFinite(children) ? { own, children } : undefined
}

/** How a PostgreSQL process is counted in the breakdown. */
export type PostgresRole = "postmaster" | "background" | "bench database" | "other backends"

const BACKGROUND =
  /: (checkpointer|background writer|walwriter|autovacuum launcher|autovacuum worker|logical replication|archiver|stats collector|walsender|walreceiver|startup|io worker|wal summarizer)/

/** Every process of the PostgreSQL server, its CPU ticks so far and role. */
export interface PostgresSnapshot {
  readonly processes: ReadonlyMap<number, { readonly role: PostgresRole; readonly ticks: number }>
  /** CPU of exited processes, as the postmaster collected it when it waited for them (cutime + cstime). */
  readonly childTicks: number
}

/**
 * The PostgreSQL server's processes: /proc/<pid>/comm `postgres`, or a command line starting with
 * postgres (the postmaster's is its binary's path, the others' `postgres: <cluster>: <what>`). /proc
 * stat files are world-readable, so another user's server is measured too.
 */
export const postgresSnapshot = async (database: string | undefined): Promise<PostgresSnapshot> => {
  const processes = new Map<number, { role: PostgresRole; ticks: number }>()
  let childTicks = 0
  const pids = (await readdir("/proc").catch(() => [] as Array<string>)).filter((entry) => /^\d+$/.test(entry))
  await Promise.all(
    pids.map(async (entry) => {
      const pid = Number(entry)
      const comm = (await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "")).trim()
      const cmdline = (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).replace(/\0+$/, "").replace(/\0/g, " ")
      const argv0 = cmdline.split(" ")[0] ?? ""
      const isPostgres = comm === "postgres" || cmdline.startsWith("postgres") || argv0.endsWith("/postgres")
      if (!isPostgres) return
      const ticks = await cpuTicksOf(pid)
      if (ticks === undefined) return
      const role: PostgresRole = !cmdline.startsWith("postgres:")
        ? "postmaster"
        : BACKGROUND.test(cmdline)
          ? "background"
          : database !== undefined && cmdline.includes(` ${database} `)
            ? "bench database"
            : "other backends"
      processes.set(pid, { role, ticks: ticks.own })
      childTicks += ticks.children
    })
  )
  return { processes, childTicks }
}

/** CPU seconds the PostgreSQL server used between two snapshots, in all and by role. */
export interface PostgresCpu {
  readonly seconds: number
  readonly byRole: ReadonlyMap<PostgresRole | "exited", number>
  /** Processes that started or exited between the snapshots (those that did both are not seen), by role. */
  readonly started: ReadonlyMap<PostgresRole, number>
  readonly exited: ReadonlyMap<PostgresRole, number>
}

const tally = (roles: ReadonlyArray<PostgresRole>) => {
  const counts = new Map<PostgresRole, number>()
  for (const role of roles) counts.set(role, (counts.get(role) ?? 0) + 1)
  return counts
}

export const postgresCpuBetween = (before: PostgresSnapshot, after: PostgresSnapshot): PostgresCpu | undefined => {
  if (before.processes.size === 0 || after.processes.size === 0) return undefined
  const byRole = new Map<PostgresRole | "exited", number>()
  const add = (role: PostgresRole | "exited", ticks: number) => byRole.set(role, (byRole.get(role) ?? 0) + ticks)
  for (const [pid, { role, ticks }] of after.processes) add(role, ticks - (before.processes.get(pid)?.ticks ?? 0))
  // A process that exited meanwhile: its ticks moved into the postmaster's children time.
  let vanished = 0
  for (const [pid, { ticks }] of before.processes) if (!after.processes.has(pid)) vanished += ticks
  add("exited", after.childTicks - before.childTicks - vanished)
  const total = [...byRole.values()].reduce((sum, ticks) => sum + ticks, 0)
  return {
    seconds: total / TICKS_PER_SECOND,
    byRole: new Map([...byRole].map(([role, ticks]) => [role, ticks / TICKS_PER_SECOND])),
    started: tally([...after.processes].filter(([pid]) => !before.processes.has(pid)).map(([, p]) => p.role)),
    exited: tally([...before.processes].filter(([pid]) => !after.processes.has(pid)).map(([, p]) => p.role))
  }
}

/** CPU seconds of one process (utime + stime, all its threads) so far. */
export const cpuSecondsOf = async (pid: number) => {
  const ticks = await cpuTicksOf(pid)
  return ticks === undefined ? undefined : ticks.own / TICKS_PER_SECOND
}

/** One line about the machine: CPU model, cores, memory, node. */
export const machineDescription = async () => {
  const cpuinfo = await readFile("/proc/cpuinfo", "utf8").catch(() => "")
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? "unknown CPU"
  const processors = cpuinfo.split("\n").filter((line) => /^processor\s*:/.test(line)).length
  return (
    `machine: ${model}, ${processors} logical CPUs in /proc/cpuinfo (${availableParallelism()} available to node), ` +
    `${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, node ${process.version}`
  )
}
