import { createServer } from "node:http"
import type { Cleanup } from "./Cleanup.ts"

/** A bare node:http server on 127.0.0.1 answering every request with the same JSON body. */
export const startReference = async (cleanup: Cleanup, port: number, body: string): Promise<string> => {
  const payload = Buffer.from(body)
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json", "content-length": payload.length })
    response.end(payload)
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", resolve)
  })
  cleanup.defer("close the reference server", async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return `http://127.0.0.1:${port}`
}
