import { Effect } from "effect"
import { createHmac } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/** How the receiver answers its n-th request (from 0): a status and headers, or never ("hang"). */
export type Answer = { readonly status: number; readonly headers?: Record<string, string> } | "hang"

/** A webhook receiver on 127.0.0.1 (a free port) recording every request, closed with the scope. */
export const receiver = (answer: (index: number) => Answer = () => ({ status: 200 })) =>
  Effect.acquireRelease(
    Effect.async<{ url: string; received: Array<Received>; close: () => void }>((resume) => {
      const received: Array<Received> = []
      const hanging: Array<ServerResponse> = []
      const server = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const index = received.length
          received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") })
          const reply = answer(index)
          if (reply === "hang") hanging.push(response)
          else response.writeHead(reply.status, reply.headers).end()
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(
          Effect.succeed({
            url: `http://127.0.0.1:${port}/hook`,
            received,
            close: () => {
              for (const response of hanging) response.destroy()
              server.closeAllConnections()
              server.close()
            }
          })
        )
      })
    }),
    (server) => Effect.sync(server.close)
  )

/** Whether `header` (`t=...,v1=...`) carries a signature of `body` by `secret`, made within the last 5 minutes. */
export const signedBy = (secret: string, header: string | string[] | undefined, body: string) => {
  if (typeof header !== "string") return false
  const parts = header.split(",").map((part) => part.split("=") as [string, string])
  const timestamp = Number(parts.find(([key]) => key === "t")?.[1])
  if (!Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > 300) return false
  const expected = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")
  return parts.some(([key, value]) => key === "v1" && value === expected)
}
