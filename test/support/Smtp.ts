import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

export interface ReceivedMail {
  readonly to: ReadonlyArray<string>
  readonly raw: string
}

/** A real SMTP server on a free local port, keeping every message it accepts. */
export const startSmtp = () =>
  new Promise<{ port: number; received: Array<ReceivedMail>; close: () => void }>((resolve) => {
    const received: Array<ReceivedMail> = []
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      onData(stream, session, callback) {
        let raw = ""
        stream.setEncoding("utf8")
        stream.on("data", (chunk: string) => (raw += chunk))
        stream.on("end", () => {
          received.push({ to: session.envelope.rcptTo.map((rcpt) => rcpt.address), raw })
          callback()
        })
      }
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.server.address() as AddressInfo
      resolve({ port, received, close: () => server.close() })
    })
  })
