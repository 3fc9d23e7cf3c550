/**
 * Example (a): the service's Layers inside another Effect program, over the program's own PgClient.
 * It creates a domain and a link through the use cases, records a click through ClickLog and reads
 * it back through Analytics. DATABASE_URL names the database (migrated at start).
 */
import { NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer } from "effect"
import { Accounts, Analytics, AppConfig, Callers, ClickLog, Domains, Links, servicesLayer, Sessions } from "link-shortener"

const email = "owner@example.com"
const password = "correct horse battery staple"

const program = Effect.gen(function* () {
  // On an empty database: the first account (plan enterprise) and its admin.
  yield* (yield* Accounts).bootstrap(email, password)
  const session = yield* (yield* Sessions).accessToken({ email, password })
  const caller = yield* (yield* Callers).ofAccessToken(session.accessToken)

  const domain = yield* (yield* Domains).create(caller, { domain: `go${Date.now()}.example`, default: true })
  const { link } = yield* (yield* Links).create(caller, domain.id, {
    url: "https://example.com/launch",
    alias: "launch",
    override_404_check: true
  })

  const clicks = yield* ClickLog
  clicks.enqueue({
    at: Date.now(),
    linkId: link.id,
    domainId: domain.id,
    ip: "203.0.113.7",
    userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36",
    referer: "https://news.example/today",
    qr: false
  })
  // Written by the click writer thread; flush waits until it is stored.
  yield* clicks.flush

  const totals = yield* (yield* Analytics).linkTotals(caller, domain.id, link.id, {})
  const recorded = yield* (yield* Analytics).rawClicks(caller, domain.id, link.id, { page: 1, perPage: 10 })
  yield* Effect.log(`link ${link.short_link} -> ${link.url}: ${JSON.stringify(totals)}, referrer ${recorded.rows[0]?.referrer ?? "none"}`)
  if (!("total" in totals) || totals.total !== 1) return yield* Effect.dieMessage(`expected one click, got ${JSON.stringify(totals)}`)
})

// The embedder's own client; the service reads where it points and opens its own connections there.
const Database = PgClient.layerConfig({ url: Config.redacted("DATABASE_URL") })

const Services = servicesLayer().pipe(Layer.provide(Database), Layer.provide(AppConfig.layer))

program.pipe(Effect.provide(Services), NodeRuntime.runMain)
