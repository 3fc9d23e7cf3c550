import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { call, numberAt, type TestUser } from "./Http.ts"

let serial = 0

/** A domain name no other test of this process uses. */
export const uniqueDomainName = (prefix = "t") => `${prefix}${Date.now().toString(36)}${++serial}.example`

/** A new domain of the user's account, by E9; its id. */
export const newDomain = (user: TestUser) =>
  Effect.map(call("POST", "/api/v4/domains", { token: user.token, body: { domain: uniqueDomainName() } }), (reply) => {
    if (reply.status !== 200) throw new Error(`domain create failed: ${reply.text}`)
    return numberAt(reply.body, "objects", 0, "id")
  })

/** A new link by E4 (no 404 check unless the body asks for one); its id. */
export const newLink = (user: TestUser, domainId: number, body: Record<string, unknown> = {}) =>
  Effect.map(
    call("POST", `/api/v4/${domainId}/links`, {
      token: user.token,
      body: { url: "https://example.com/start", override_404_check: 1, ...body }
    }),
    (reply) => {
      if (reply.status !== 200) throw new Error(`link create failed: ${reply.text}`)
      return numberAt(reply.body, "objects", 0, "id")
    }
  )

/** A local server answering every path with `status`, counting its hits, closed with the scope. */
export const answering = (status: number) =>
  Effect.acquireRelease(
    Effect.async<{ url: string; hits: () => number; close: () => void }>((resume) => {
      let hits = 0
      const server = createServer((_, res) => {
        hits++
        res.writeHead(status).end()
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}/page`, hits: () => hits, close: () => server.close() }))
      })
    }),
    (server) => Effect.sync(server.close)
  )

export interface TemplateField {
  readonly label: string
  readonly field_code: string
  readonly type: string
  readonly required: boolean
}

/** A UTM template of the domain, written directly (the CLI makes them in production); its id. */
export const newUtmTemplate = (user: TestUser, domainId: number, fields: ReadonlyArray<TemplateField>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: number }>`
        INSERT INTO utm_templates (account_id, domain_id, name, fields)
        VALUES (${user.accountId}, ${domainId}, 'news', ${JSON.stringify(fields)}::jsonb) RETURNING id`,
      (rows) => rows[0]!.id
    )
  ).pipe(Effect.orDie)
