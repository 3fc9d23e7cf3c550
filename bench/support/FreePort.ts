import { createServer } from "node:net"

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => (port === 0 ? reject(new Error("no free port")) : resolve(port)))
    })
  })
