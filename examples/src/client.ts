/**
 * Example (b): a typed client of a running server, made from the service's HttpApi definition. It
 * logs in, creates a domain and a link, and reads the link's report. LINKS_URL is the server's
 * address, LINKS_EMAIL and LINKS_PASSWORD an account admin's credentials.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Config, Effect } from "effect"
import { Api } from "link-shortener/api"

const program = Effect.gen(function* () {
  const baseUrl = yield* Config.string("LINKS_URL")
  const email = yield* Config.string("LINKS_EMAIL")
  const password = yield* Config.string("LINKS_PASSWORD")

  const anonymous = yield* HttpApiClient.make(Api, { baseUrl })
  const session = yield* anonymous.auth.accessToken({ payload: { email, password } })

  const client = yield* HttpApiClient.make(Api, {
    baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(session.access_token))
  })
  const domains = yield* client.domains.create({ payload: { domain: `typed${Date.now()}.example` } })
  const domain = domains.objects[0]!
  const created = yield* client.links.create({
    path: { domain_id: domain.id },
    payload: { url: "https://example.com/typed", alias: "typed", override_404_check: true }
  })
  const link = created.objects[0]!
  const report = yield* client.analytics.link_totals({ path: { domain_id: domain.id, link_id: link.id }, urlParams: {} })
  yield* Effect.log(`${session.user.email} created ${link.short_link}; its clicks: ${JSON.stringify(report)}`)
  if (!("total" in report) || report.total !== 0) return yield* Effect.dieMessage(`expected no click yet, got ${JSON.stringify(report)}`)
})

program.pipe(Effect.provide(FetchHttpClient.layer), NodeRuntime.runMain)
