import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { call, type TestUser } from "./Http.ts"
import { visit } from "./Redirects.ts"

/** Replaces a link's settings (`PUT .../links/{link}/settings`); fails the test unless they are stored. */
export const putSettings = (user: TestUser, domainId: number, linkId: number, settings: Record<string, unknown>) =>
  Effect.map(call("PUT", `/api/v4/${domainId}/links/${linkId}/settings`, { token: user.token, body: settings }), (reply) => {
    if (reply.status !== 200) throw new Error(`settings not stored: ${reply.status} ${reply.text}`)
    return reply.body
  })

/** The password form's answer, as a browser posts it. */
export const postPassword = (host: string, path: string, password: string, headers: Record<string, string> = {}) => {
  const body = new URLSearchParams({ password }).toString()
  return visit(host, path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "content-length": String(Buffer.byteLength(body)), ...headers },
    body
  })
}

export const FACEBOOK = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"
export const SLACK = "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"
export const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0"

/** The argon2id hash a link's password is stored as. */
export const storedPasswordHash = (linkId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ hash: string }>`SELECT password_hash AS hash FROM link_settings WHERE link_id = ${linkId}`, (rows) => rows[0]!.hash)
  ).pipe(Effect.orDie)
