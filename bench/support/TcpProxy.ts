import { connect, createServer, type NetConnectOpts, type Socket } from "node:net"

export interface TcpProxy {
  readonly port: number
  /** Every open connection dropped, every new one refused: what clients see of a stopped server. */
  readonly cut: () => void
  readonly restore: () => void
  readonly close: () => Promise<void>
}

/** A TCP proxy on 127.0.0.1 to `target` (host and port, or a Unix socket path) that can be cut and restored. */
export const openTcpProxy = async (target: NetConnectOpts): Promise<TcpProxy> => {
  const pairs = new Set<readonly [Socket, Socket]>()
  let isCut = false
  const dropAll = () => {
    for (const pair of pairs) for (const socket of pair) socket.destroy()
  }
  const server = createServer((client) => {
    if (isCut) return void client.destroy()
    const upstream = connect(target)
    const pair = [client, upstream] as const
    pairs.add(pair)
    const close = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    for (const socket of pair) socket.on("error", close).on("close", close)
    client.pipe(upstream).pipe(client)
  })
  const port = await new Promise<number>((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    })
  })
  return {
    port,
    cut: () => {
      isCut = true
      dropAll()
    },
    restore: () => {
      isCut = false
    },
    close: () => {
      dropAll()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
