/**
 * An open-loop HTTP/1.1 load generator, run as a child process by `PacedLoad.ts`: request n is due at
 * start + n / rate, whatever the server does, and goes out on the first idle keep-alive connection
 * once due. Each millisecond's tick sends what fell due since the last one, so the rate arrives
 * evenly, not in bursts. Latency is kept twice: from the request's write, and from the time it was
 * due (which counts the wait for an idle connection, as a visitor would feel a stalled server:
 * no coordinated omission).
 *
 * Argument: the JSON of `PacedSettings`. Output: one line of JSON, `PacedOutcome`.
 */
import { connect, type Socket } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"

export interface PacedSettings {
  readonly host: string
  readonly port: number
  readonly hostHeader: string
  readonly headers: Readonly<Record<string, string>>
  readonly paths: ReadonlyArray<string>
  readonly rate: number
  readonly seconds: number
  /**
   * Seconds at the same rate before `seconds`, whose answers are left out of the figures (default 0):
   * fresh connections' first requests and the switch from the previous run are not the steady rate.
   */
  readonly warmupSeconds?: number
  readonly connections: number
  /** An answer slower than this counts as a timeout (and its connection is replaced). */
  readonly timeoutMs: number
}

export interface PacedOutcome {
  readonly statuses: Readonly<Record<string, number>>
  readonly errors: number
  readonly timeouts: number
  /** Requests that were due but never sent before the run ended (every connection busy). */
  readonly unsent: number
  /** Answers of the warm-up by status, and the slowest of them from its due time, ms. */
  readonly warmupStatuses: Readonly<Record<string, number>>
  readonly warmupMaxMs: number
  /** Answers completed in the measured part (the warm-up's backlog included), for its req/s. */
  readonly completedAfterWarmup: number
  readonly elapsedSeconds: number
  /** This process's CPU time (user + system) over the whole run. */
  readonly cpuSeconds: number
  /** Per answer: ms from write to the answer's end, ms from due time to the end, end time in ms from the start. */
  readonly fromWrite: ReadonlyArray<number>
  readonly fromDue: ReadonlyArray<number>
  readonly ends: ReadonlyArray<number>
}

interface Connection {
  readonly socket: Socket
  busy: boolean
  /** Whether its request is one of the warm-up's. */
  warm: boolean
  due: number
  written: number
  received: Buffer
}

const HEADER_END = Buffer.from("\r\n\r\n")
const CHUNKED_END = Buffer.from("0\r\n\r\n")

/** Whether `data` holds one whole answer, and its status; answers without a body length end with the chunked terminator. */
const parse = (data: Buffer): { readonly status: number } | undefined => {
  const headerEnd = data.indexOf(HEADER_END)
  if (headerEnd === -1) return undefined
  const head = data.toString("latin1", 0, headerEnd)
  const status = Number(head.slice(9, 12))
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
  if (length !== null) return data.length >= headerEnd + 4 + Number(length[1]) ? { status } : undefined
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) return data.indexOf(CHUNKED_END, headerEnd + 4) === -1 ? undefined : { status }
  return { status }
}

const run = async (settings: PacedSettings): Promise<PacedOutcome> => {
  const requests = settings.paths.map((path) =>
    Buffer.from(
      `GET ${path} HTTP/1.1\r\nhost: ${settings.hostHeader}\r\n` +
        Object.entries(settings.headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join("") +
        "\r\n",
      "latin1"
    )
  )
  const statuses: Record<string, number> = {}
  const fromWrite: Array<number> = []
  const fromDue: Array<number> = []
  const ends: Array<number> = []
  let errors = 0
  let timeouts = 0
  const warmupStatuses: Record<string, number> = {}
  let warmupMaxMs = 0
  const idle: Array<Connection> = []
  const all = new Set<Connection>()
  let start = 0
  // The measured part's start: answers completed from then on make its req/s.
  let measureFrom = 0
  let completedAfterWarmup = 0
  let stopping = false

  const open = () =>
    new Promise<Connection>((resolve, reject) => {
      const socket = connect({ host: settings.host, port: settings.port, noDelay: true })
      const connection: Connection = { socket, busy: false, warm: false, due: 0, written: 0, received: Buffer.alloc(0) }
      socket.once("connect", () => {
        all.add(connection)
        resolve(connection)
      })
      socket.once("error", reject)
      // Closed by the server or failed: a connection takes its place (the request it carried is an error).
      socket.once("close", () => {
        if (!all.has(connection) || stopping) return
        if (connection.busy) errors++
        const at = idle.indexOf(connection)
        if (at !== -1) idle.splice(at, 1)
        replace(connection)
      })
      socket.on("data", (chunk: Buffer) => {
        if (!connection.busy) return
        connection.received = connection.received.length === 0 ? chunk : Buffer.concat([connection.received, chunk])
        const answer = parse(connection.received)
        if (answer === undefined) return
        const now = performance.now()
        if (now >= measureFrom) completedAfterWarmup++
        if (connection.warm) {
          warmupStatuses[answer.status] = (warmupStatuses[answer.status] ?? 0) + 1
          warmupMaxMs = Math.max(warmupMaxMs, now - connection.due)
        } else {
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1
          fromWrite.push(now - connection.written)
          fromDue.push(now - connection.due)
          ends.push(now - measureFrom)
        }
        connection.busy = false
        connection.received = Buffer.alloc(0)
        idle.push(connection)
      })
    })

  const replace = (connection: Connection) => {
    connection.busy = false
    all.delete(connection)
    connection.socket.destroy()
    void open().then(
      (fresh) => idle.push(fresh),
      () => errors++
    )
  }

  for (let i = 0; i < settings.connections; i++) idle.push(await open())
  const cpuBefore = process.cpuUsage()
  const warmupSeconds = settings.warmupSeconds ?? 0
  // Requests 0 to warmupCount - 1 are the warm-up's.
  const warmupCount = Math.round(settings.rate * warmupSeconds)
  const total = warmupCount + Math.round(settings.rate * settings.seconds)
  let sent = 0
  let issued = 0
  // Requests (their numbers) waiting for an idle connection.
  const waiting: Array<number> = []
  start = performance.now()
  measureFrom = start + warmupSeconds * 1000
  const end = measureFrom + settings.seconds * 1000
  const interval = 1000 / settings.rate
  while (performance.now() < end || (waiting.length > 0 && performance.now() < end + settings.timeoutMs)) {
    const now = performance.now()
    const dueNow = Math.min(total, Math.floor((now - start) / interval) + 1)
    for (; sent < dueNow; sent++) waiting.push(sent)
    while (waiting.length > 0 && idle.length > 0) {
      const connection = idle.shift()!
      const n = waiting.shift()!
      connection.busy = true
      connection.warm = n < warmupCount
      connection.due = start + n * interval
      connection.written = performance.now()
      connection.socket.write(requests[issued++ % requests.length]!)
    }
    for (const connection of all) {
      if (connection.busy && now - connection.written > settings.timeoutMs) {
        timeouts++
        replace(connection)
      }
    }
    await sleep(1)
  }
  // Let the answers in flight arrive.
  const drainUntil = performance.now() + settings.timeoutMs
  while ([...all].some((connection) => connection.busy) && performance.now() < drainUntil) await sleep(1)
  const elapsedSeconds = (performance.now() - measureFrom) / 1000
  stopping = true
  for (const connection of all) connection.socket.destroy()
  const cpu = process.cpuUsage(cpuBefore)
  const cpuSeconds = (cpu.user + cpu.system) / 1e6
  return { statuses, errors, timeouts, unsent: waiting.length, warmupStatuses, warmupMaxMs, completedAfterWarmup, elapsedSeconds, cpuSeconds, fromWrite, fromDue, ends }
}

const [, , argument] = process.argv
if (argument !== undefined) {
  const settings: PacedSettings = JSON.parse(argument)
  run(settings).then(
    (outcome) => process.stdout.write(`${JSON.stringify(outcome)}\n`, () => process.exit(0)),
    (error: unknown) => {
      process.stderr.write(`paced load failed: ${String(error)}\n`)
      process.exit(1)
    }
  )
}
