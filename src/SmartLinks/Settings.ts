import { Effect, Option } from "effect"
import type { Caller } from "../Accounts/User.ts"
import { Analytics, type WindowBounds } from "../Analytics/Analytics.ts"
import { DomainAccess } from "../Domains/DomainAccess.ts"
import { viewerOf } from "../Links/LinkAccess.ts"
import { LinkNotFound } from "../Links/LinkErrors.ts"
import { LinkRepo } from "../Links/LinkRepo.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { ClientNetwork } from "../Platform/ClientIp.ts"
import { readOf, RefusedSettings, type SettingsValues } from "./SettingsBody.ts"
import { SettingsRepo } from "./SettingsRepo.ts"
import { SettingsStore } from "./SettingsStore.ts"

/**
 * Smart-link settings through the API (an extension, README "Smart links"): read and replaced by
 * whoever may read and update the link (E11/E12: the link visible to the caller), and the clicks per
 * destination served.
 */
export class Settings extends Effect.Service<Settings>()("Settings", {
  effect: Effect.gen(function* () {
    const store = yield* SettingsStore
    const repo = yield* SettingsRepo
    const links = yield* LinkRepo
    const access = yield* DomainAccess
    const analytics = yield* Analytics

    /** The link as E11 and E12 find it for the caller, else not found. */
    const visibleLink = (caller: Caller, domainId: number, linkId: number) =>
      Effect.gen(function* () {
        const viewer = yield* viewerOf(access, caller, domainId, { activeOnly: false })
        if (Option.isNone(yield* links.byId(domainId, linkId, viewer))) return yield* Effect.fail(LinkNotFound.of())
      })

    const get = (caller: Caller, domainId: number, linkId: number) =>
      Effect.zipRight(visibleLink(caller, domainId, linkId), store.show(linkId)).pipe(orDieOnInfrastructure)

    /** A body as `SettingsBody` decodes it: read against the rules, or refused by them. */
    const put = (caller: Caller, domainId: number, linkId: number, body: SettingsValues | RefusedSettings) =>
      Effect.zipRight(
        visibleLink(caller, domainId, linkId),
        body instanceof RefusedSettings
          ? Effect.fail(body.refusal)
          : Effect.flatMap(ClientNetwork, (network) => store.save(linkId, readOf(body), network))
      ).pipe(orDieOnInfrastructure)

    /** Clicks and unique visitors per destination served, over a window, with the rules of the link reports. */
    const destinations = (caller: Caller, domainId: number, linkId: number, bounds: WindowBounds) =>
      analytics.linkWindowed(caller, domainId, linkId, bounds, (window) => repo.destinations(linkId, window))

    return { get, put, destinations } as const
  }),
  dependencies: [SettingsStore.Default, SettingsRepo.Default]
}) {}
