import { createServer } from "node:http"

/**
 * The listener with its timeouts set explicitly: Node only enforces them when it checks connections,
 * every 30 s by default, so the check runs every second here.
 */
export const makeNodeServer = () => {
  const server = createServer({
    connectionsCheckingInterval: 1_000,
    headersTimeout: 10_000,
    requestTimeout: 30_000,
    keepAliveTimeout: 5_000,
    maxHeaderSize: 16 * 1024
  })
  server.headersTimeout = 10_000
  server.requestTimeout = 30_000
  server.keepAliveTimeout = 5_000
  return server
}
