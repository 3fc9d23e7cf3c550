import { connect, createServer, type Socket } from "node:net"

export interface RawConnection {
  readonly socket: Socket
  readonly write: (text: string) => Promise<void>
  /** Everything the server sent, once it closed the connection, and how long after opening. */
  readonly closed: Promise<{ readonly received: string; readonly afterMs: number }>
}

/** A TCP connection on which a test writes HTTP by hand (partial headers, half a body...). */
export const openRaw = (port: number, host = "127.0.0.1"): Promise<RawConnection> =>
  new Promise((resolve, reject) => {
    const opened = Date.now()
    const socket = connect(port, host)
    let received = ""
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => {
      received += chunk
    })
    const closed = new Promise<{ received: string; afterMs: number }>((done) => {
      socket.on("close", () => done({ received, afterMs: Date.now() - opened }))
    })
    socket.once("error", reject)
    socket.once("connect", () => {
      socket.off("error", reject)
      socket.on("error", () => undefined)
      resolve({
        socket,
        closed,
        write: (text) => new Promise((written, failed) => socket.write(text, (error) => (error ? failed(error) : written())))
      })
    })
  })

/** Whether a new TCP connection to the port is accepted. */
export const accepts = (port: number, host = "127.0.0.1"): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, host)
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** A port that was free a moment ago. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** The status code and the JSON body of a complete HTTP/1.1 response read off a raw connection. */
export const parseResponse = (raw: string) => {
  const split = raw.indexOf("\r\n\r\n")
  const head = split === -1 ? raw : raw.slice(0, split)
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? NaN)
  const headers = new Map(
    head
      .split("\r\n")
      .slice(1)
      .map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()] as const)
  )
  const body = split === -1 ? "" : raw.slice(split + 4)
  return { status, headers, body }
}
