import { connect, createServer, type NetConnectOpts, type Socket } from "node:net"

export interface TcpProxy {
  readonly port: number
  /** Every open connection dropped, every new one refused: what clients see of a stopped server. */
  readonly cut: () => void
  /**
   * Nothing passes either way and new connections are accepted but never answered, until `restore`
   * lets the held bytes through: what clients see of a network partition.
   */
  readonly blackhole: () => void
  readonly restore: () => void
  readonly close: () => Promise<void>
}

/** A TCP proxy on 127.0.0.1 to `target` (host and port, or a Unix socket path) that can be cut and restored. */
export const openTcpProxy = async (target: NetConnectOpts): Promise<TcpProxy> => {
  const pairs = new Set<readonly [Socket, Socket]>()
  const held = new Set<Socket>()
  let state: "open" | "cut" | "blackholed" = "open"
  const dropAll = () => {
    for (const pair of pairs) for (const socket of pair) socket.destroy()
    for (const socket of held) socket.destroy()
  }
  const forward = (client: Socket) => {
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
  }
  const server = createServer((client) => {
    if (state === "cut") return void client.destroy()
    if (state === "open") return forward(client)
    held.add(client)
    client.pause()
    client.on("error", () => client.destroy()).on("close", () => held.delete(client))
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
      state = "cut"
      dropAll()
    },
    blackhole: () => {
      state = "blackholed"
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream).pause()
        upstream.unpipe(client).pause()
      }
    },
    restore: () => {
      if (state === "blackholed") {
        for (const [client, upstream] of pairs) client.pipe(upstream).pipe(client)
        for (const client of held) forward(client)
        held.clear()
      }
      state = "open"
    },
    close: () => {
      dropAll()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
