/**
 * The embedding Layers send webhook deliveries: a link changed through `servicesLayer()` (over the
 * embedder's own PgClient) reaches a webhook registered by another process on the same database,
 * with no server Layer running anywhere.
 */
import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { TokenSecret } from "../src/Auth/TokenStore.ts"
import { Accounts } from "../src/Accounts/Accounts.ts"
import { Domains } from "../src/Domains/Domains.ts"
import { Callers } from "../src/Embedding/Callers.ts"
import { servicesLayer } from "../src/Embedding/Layers.ts"
import { testConfigLayer } from "../src/Embedding/Testing.ts"
import { Sessions } from "../src/Auth/Sessions.ts"
import { Links } from "../src/Links/Links.ts"
import { WebhookSecrets } from "../src/Webhooks/Signature.ts"
import { within } from "./support/Http.ts"
import { receiver, signedBy } from "./support/Receiver.ts"
import { describeUnless, withoutServer } from "./support/SkipReasons.ts"
import { scopedServerDatabase, testServerUrl } from "./support/TestDatabase.ts"

const serverUrl = testServerUrl ?? ""
const EMAIL = "embedder@example.com"
const PASSWORD = "correct horse battery staple"

/** The embedder's own client, on a database of its own for this file. */
const EmbedderDatabase = Layer.unwrapScoped(
  Effect.map(scopedServerDatabase(serverUrl, "links_embed"), ({ url }) => PgClient.layer({ url: Redacted.make(url) }))
)
const Config = testConfigLayer({ URL_CHECK_ALLOW_PRIVATE: "true", WEBHOOK_POLL_MILLIS: "100" })
/** What another process registering a webhook seals its secret with: the same token secret. */
const Sealing = WebhookSecrets.Default.pipe(Layer.provide(TokenSecret.Default))

describeUnless(withoutServer("the embedder's own PgClient reaches a database on a server"), "embedding: webhooks", () => {
  layer(Layer.mergeAll(servicesLayer(), Sealing).pipe(Layer.provideMerge(EmbedderDatabase), Layer.provide(Config)), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.scoped("a link created through servicesLayer() is delivered to the domain's webhook, signed", () =>
      Effect.gen(function* () {
        const hook = yield* receiver()
        yield* (yield* Accounts).bootstrap(EMAIL, PASSWORD)
        const session = yield* (yield* Sessions).accessToken({ email: EMAIL, password: PASSWORD })
        const caller = yield* (yield* Callers).ofAccessToken(session.accessToken)
        const domain = yield* (yield* Domains).create(caller, { domain: `hooks${Date.now()}.example` })
        const secret = "whsec_embedded"
        const sql = yield* SqlClient.SqlClient
        yield* sql`
          INSERT INTO webhooks (domain_id, url, events, secret)
          VALUES (${domain.id}, ${hook.url}, ${["link.created"]}::text[], ${(yield* WebhookSecrets).seal(secret)})`

        const { link } = yield* (yield* Links).create(caller, domain.id, { url: "https://example.com/embedded", override_404_check: true })
        expect(yield* within(10_000, Effect.sync(() => hook.received.length > 0))).toBeLessThan(10_000)
        const [delivery] = hook.received
        expect(JSON.parse(delivery!.body)).toMatchObject({ event: "link.created", domain_id: domain.id, link: { id: link.id, url: "https://example.com/embedded" } })
        expect(signedBy(secret, delivery!.headers["webhook-signature"], delivery!.body)).toBe(true)
        const delivered = sql<{ state: string }>`SELECT state FROM webhook_deliveries WHERE webhook_id IN (SELECT id FROM webhooks WHERE domain_id = ${domain.id})`
        expect(yield* within(5000, Effect.map(Effect.orDie(delivered), (rows) => rows.length === 1 && rows[0]!.state === "delivered"))).toBeLessThan(5000)
      }).pipe(Effect.orDie)
    )
  })
})
