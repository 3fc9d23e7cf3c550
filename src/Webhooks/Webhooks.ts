import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { Caller } from "../Accounts/User.ts"
import { AppConfig } from "../Config.ts"
import { DomainAccess } from "../Domains/DomainAccess.ts"
import { DomainNotFound } from "../Domains/DomainErrors.ts"
import { parseHttpUrl } from "../Links/Url.ts"
import { checkedTarget, policyOf, type Resolver } from "../Links/UrlChecker.ts"
import { InvalidInput } from "../Platform/Failure.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { offsetOf, type PageRequest } from "../Platform/Pagination.ts"
import { newWebhookSecret, WebhookSecrets } from "./Signature.ts"
import type { WebhookEvent } from "./Webhook.ts"
import { DeliveryNotFound, NothingToUpdate, NotWebhookAdmin, TooManyWebhooks, WebhookNotFound } from "./WebhookErrors.ts"
import { type WebhookChanges, WebhookRepo } from "./WebhookRepo.ts"

/** Active webhooks one domain may have (each event goes to each), and webhooks in all. */
export const ACTIVE_WEBHOOKS_PER_DOMAIN = 10
export const WEBHOOKS_PER_DOMAIN = 100
/** How long the secret a rotation replaces still signs, beside the new one. */
export const ROTATION_GRACE_SECONDS = 24 * 60 * 60

/** Names are not looked up at registration: a host name is left to the dispatcher's check of each connection. */
const unresolved: Resolver = () => Effect.succeed([])

type UrlCheck = { readonly ok: true; readonly url: string } | { readonly ok: false; readonly problem: 10802 | 10803 }

export interface WebhookInput {
  readonly url: string
  readonly events: ReadonlyArray<WebhookEvent>
  readonly active?: boolean | undefined
}

/**
 * The webhooks use cases (an extension): account admins and admins of a domain manage its webhooks
 * and read their delivery log. A domain of another account, or a webhook of another domain, is not
 * found; a member who administers neither is refused.
 */
export class Webhooks extends Effect.Service<Webhooks>()("Webhooks", {
  effect: Effect.gen(function* () {
    const repo = yield* WebhookRepo
    const access = yield* DomainAccess
    const secrets = yield* WebhookSecrets
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const policy = policyOf(config.urlCheckAllowPrivate)

    const administered = (caller: Caller, domainId: number) =>
      Effect.gen(function* () {
        const view = yield* access.view(caller, domainId)
        if (Option.isNone(view)) return yield* Effect.fail(DomainNotFound.of())
        if (!view.value.seesAll) return yield* Effect.fail(NotWebhookAdmin.of())
      })

    /**
     * The URL as stored, or the code of what is wrong with it: not a full http(s) URL, or a host that
     * is an address the policy refuses (a literal, or `localhost`). A name is accepted whatever it
     * resolves to, so that the answer tells nobody what a name resolves to inside our network; the
     * dispatcher checks the addresses of each connection.
     */
    const checkUrl = (raw: string): Effect.Effect<UrlCheck> =>
      Effect.gen(function* () {
        const parsed = parseHttpUrl(raw, { assumeHttp: false })
        if (parsed === undefined) return { ok: false, problem: 10802 } as const
        const refused = yield* checkedTarget(new URL(parsed), policy, unresolved).pipe(
          Effect.as(false),
          Effect.catchAll((error) => Effect.succeed(error._tag === "AddressRefused"))
        )
        return refused ? ({ ok: false, problem: 10803 } as const) : ({ ok: true, url: parsed } as const)
      })

    const found = <A>(value: Option.Option<A>) => Option.match(value, { onNone: () => Effect.fail(WebhookNotFound.of()), onSome: Effect.succeed })

    // The operations on a domain the caller may manage (the API checks it first; the admin CLI may manage any).

    const getOn = (domainId: number, id: number) => Effect.flatMap(repo.byId(domainId, id), found)

    /** In the caller's transaction: room for one more webhook on the domain (an active one when `active`). */
    const withinLimits = (domainId: number, active: boolean) =>
      Effect.gen(function* () {
        const count = yield* repo.countOnDomain(domainId)
        if (Option.isNone(count)) return yield* Effect.fail(DomainNotFound.of())
        if (count.value.total >= WEBHOOKS_PER_DOMAIN || (active && count.value.active >= ACTIVE_WEBHOOKS_PER_DOMAIN)) {
          return yield* Effect.fail(TooManyWebhooks.of(String(ACTIVE_WEBHOOKS_PER_DOMAIN), String(WEBHOOKS_PER_DOMAIN)))
        }
      })

    const createOn = (domainId: number, input: WebhookInput) =>
      Effect.gen(function* () {
        const checked = yield* checkUrl(input.url)
        if (!checked.ok) return yield* Effect.fail(InvalidInput.of(checked.problem))
        const secret = newWebhookSecret()
        const id = yield* sql.withTransaction(
          Effect.gen(function* () {
            const active = input.active ?? true
            yield* withinLimits(domainId, active)
            const events = [...new Set(input.events)]
            return yield* repo.insert({ domainId, url: checked.url, events, active, secret: secrets.seal(secret) })
          })
        )
        return { webhook: yield* getOn(domainId, id).pipe(Effect.catchTag("WebhookNotFound", Effect.die)), secret }
      })

    const updateOn = (domainId: number, id: number, input: WebhookChanges) =>
      Effect.gen(function* () {
        const before = yield* getOn(domainId, id)
        if (input.url === undefined && input.events === undefined && input.active === undefined) return yield* Effect.fail(NothingToUpdate.of())
        let url: string | undefined
        if (input.url !== undefined) {
          const checked = yield* checkUrl(input.url)
          if (!checked.ok) return yield* Effect.fail(InvalidInput.of(checked.problem))
          url = checked.url
        }
        const changes: WebhookChanges = { url, events: input.events === undefined ? undefined : [...new Set(input.events)], active: input.active }
        const activating = input.active === true && !before.active
        const updated = yield* sql.withTransaction(
          Effect.zipRight(activating ? withinLimits(domainId, true) : Effect.void, repo.update(domainId, id, changes))
        )
        if (!updated) return yield* Effect.fail(WebhookNotFound.of())
        return yield* getOn(domainId, id)
      })

    const removeOn = (domainId: number, id: number) =>
      Effect.flatMap(repo.remove(domainId, id), (removed) => (removed ? Effect.void : Effect.fail(WebhookNotFound.of())))

    const rotateOn = (domainId: number, id: number) =>
      Effect.gen(function* () {
        const secret = newWebhookSecret()
        if (!(yield* repo.rotate(domainId, id, secrets.seal(secret), ROTATION_GRACE_SECONDS))) return yield* Effect.fail(WebhookNotFound.of())
        return { webhook: yield* getOn(domainId, id), secret }
      })

    const deliveriesOn = (domainId: number, id: number, page: PageRequest) =>
      Effect.flatMap(getOn(domainId, id), () => repo.deliveries(id, page.perPage, offsetOf(page)))

    const replayOn = (domainId: number, id: number, deliveryId: number) =>
      Effect.gen(function* () {
        yield* getOn(domainId, id)
        if (!(yield* repo.replay(id, deliveryId, config.webhookRetryForSeconds))) return yield* Effect.fail(DeliveryNotFound.of())
        return yield* Effect.flatMap(
          repo.delivery(id, deliveryId),
          Option.match({ onNone: () => Effect.fail(DeliveryNotFound.of()), onSome: Effect.succeed })
        )
      })

    const get = (caller: Caller, domainId: number, id: number) => Effect.zipRight(administered(caller, domainId), getOn(domainId, id)).pipe(orDieOnInfrastructure)
    const list = (caller: Caller, domainId: number) => Effect.zipRight(administered(caller, domainId), repo.list(domainId)).pipe(orDieOnInfrastructure)
    /** The new webhook and its secret, which is shown this once. */
    const create = (caller: Caller, domainId: number, input: WebhookInput) =>
      Effect.zipRight(administered(caller, domainId), createOn(domainId, input)).pipe(orDieOnInfrastructure)
    const update = (caller: Caller, domainId: number, id: number, input: WebhookChanges) =>
      Effect.zipRight(administered(caller, domainId), updateOn(domainId, id, input)).pipe(orDieOnInfrastructure)
    const remove = (caller: Caller, domainId: number, id: number) =>
      Effect.zipRight(administered(caller, domainId), removeOn(domainId, id)).pipe(orDieOnInfrastructure)
    /** A new secret, shown this once; the previous one still signs beside it for a day. */
    const rotateSecret = (caller: Caller, domainId: number, id: number) =>
      Effect.zipRight(administered(caller, domainId), rotateOn(domainId, id)).pipe(orDieOnInfrastructure)
    /** One page of the webhook's deliveries, newest first, each with its attempts. */
    const deliveries = (caller: Caller, domainId: number, id: number, page: PageRequest) =>
      Effect.zipRight(administered(caller, domainId), deliveriesOn(domainId, id, page)).pipe(orDieOnInfrastructure)
    /** The delivery sent again as soon as a dispatcher takes it, with the same `Webhook-Id`. */
    const replay = (caller: Caller, domainId: number, id: number, deliveryId: number) =>
      Effect.zipRight(administered(caller, domainId), replayOn(domainId, id, deliveryId)).pipe(orDieOnInfrastructure)

    /** The webhook's domain, for the admin CLI, which names a webhook by id alone. */
    const domainOf = (id: number) =>
      Effect.flatMap(repo.domainOf(id), Option.match({ onNone: () => Effect.fail(WebhookNotFound.of()), onSome: Effect.succeed }))

    /** The admin CLI's operations: any domain, webhooks and deliveries by id. */
    const operator = {
      list: (domainId: number) => repo.list(domainId).pipe(orDieOnInfrastructure),
      create: (domainId: number, input: WebhookInput) => createOn(domainId, input).pipe(orDieOnInfrastructure),
      remove: (id: number) => Effect.flatMap(domainOf(id), (domainId) => removeOn(domainId, id)).pipe(orDieOnInfrastructure),
      rotateSecret: (id: number) => Effect.flatMap(domainOf(id), (domainId) => rotateOn(domainId, id)).pipe(orDieOnInfrastructure),
      deliveries: (id: number, page: PageRequest) => Effect.flatMap(domainOf(id), (domainId) => deliveriesOn(domainId, id, page)).pipe(orDieOnInfrastructure),
      replay: (deliveryId: number) =>
        Effect.flatMap(
          repo.webhookOfDelivery(deliveryId),
          Option.match({
            onNone: () => Effect.fail(DeliveryNotFound.of()),
            onSome: (owner) => replayOn(owner.domain_id, owner.webhook_id, deliveryId)
          })
        ).pipe(orDieOnInfrastructure)
    }

    return { get, list, create, update, remove, rotateSecret, deliveries, replay, operator } as const
  }),
  dependencies: [WebhookRepo.Default, WebhookSecrets.Default]
}) {}
