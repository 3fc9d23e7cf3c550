import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ClickLog } from "../../src/Clicks/ClickLog.ts"
import { uniqueDomainName } from "./Fixtures.ts"
import { call, numberAt, type TestUser } from "./Http.ts"
import { rawRequest } from "./RawClient.ts"

/** A new domain of the user's account with the given settings; its id and name. */
export const newShortDomain = (user: TestUser, settings: { homepage?: string; url_404?: string } = {}) =>
  Effect.gen(function* () {
    const name = uniqueDomainName("r")
    const reply = yield* call("POST", "/api/v4/domains", { token: user.token, body: { domain: name, ...settings } })
    if (reply.status !== 200) throw new Error(`domain create failed: ${reply.text}`)
    return { id: numberAt(reply.body, "objects", 0, "id"), name }
  })

/** One request to the short domain `host` on the test listener. */
export const visit = (
  host: string,
  path: string,
  options: { readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string } = {}
) =>
  Effect.flatMap(
    rawRequest({
      method: options.method ?? "GET",
      path,
      headers: { host, ...options.headers },
      chunks: options.body === undefined ? [] : [options.body],
      end: true
    }),
    (outcome) => {
      if (outcome._tag !== "Response") throw new Error(`no answer from ${host}${path}: ${outcome._tag}`)
      return Effect.succeed(outcome)
    }
  )

export interface StoredClick {
  readonly link_id: number
  readonly domain_id: number
  readonly ip_hash: string
  readonly country: string | null
  readonly region: string | null
  readonly city: string | null
  readonly device: string
  readonly referrer: string
  readonly user_agent: string
  readonly qr: boolean
  readonly bot: boolean
}

/** Writes the queued clicks, then reads the link's clicks back, oldest first. */
export const clicksOf = (linkId: number) =>
  Effect.gen(function* () {
    yield* (yield* ClickLog).flush
    const sql = yield* SqlClient.SqlClient
    return yield* sql<StoredClick>`
      SELECT link_id, domain_id, encode(ip_hash, 'hex') AS ip_hash, country, region, city, device, referrer,
             (SELECT u.user_agent FROM user_agents u WHERE u.id = user_agent_id) AS user_agent, qr, bot
      FROM clicks WHERE link_id = ${linkId} ORDER BY at, id`
  })
