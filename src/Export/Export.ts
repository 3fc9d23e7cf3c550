import { Effect } from "effect"
import type { Caller } from "../Accounts/User.ts"
import { PlanWithoutAnalytics } from "../Analytics/AnalyticsErrors.ts"
import { AppConfig } from "../Config.ts"
import { DomainAccess } from "../Domains/DomainAccess.ts"
import { viewerOf } from "../Links/LinkAccess.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { keyedGate } from "../Platform/KeyedGate.ts"
import { ExportForbidden, ExportsBusy } from "./ExportErrors.ts"
import { type ClicksRequest, ExportCsv } from "./ExportCsv.ts"

/**
 * The exports of the API: for account admins and admins of the domain (10003 for other users of the
 * account; a domain of another account is 404 10101, as everywhere), disabled domains included.
 * The clicks export needs a plan with analytics (10504, checked first, as the reports do). Once the
 * request is found valid, the export takes one of its account's EXPORT_CONCURRENCY_PER_ACCOUNT places
 * (503 10901 at once when none is free, never queued) and holds it until the caller's scope closes:
 * the request's scope, which outlives the streamed answer.
 */
export class Export extends Effect.Service<Export>()("Export", {
  effect: Effect.gen(function* () {
    const files = yield* ExportCsv
    const access = yield* DomainAccess
    const config = yield* AppConfig
    const streaming = keyedGate<number>(config.exportConcurrencyPerAccount)

    const requireAdmin = (caller: Caller, domainId: number) =>
      Effect.flatMap(viewerOf(access, caller, domainId, { activeOnly: false }), (viewer) =>
        viewer.seesAll ? Effect.void : Effect.fail(ExportForbidden.of())
      )

    const place = (caller: Caller) => streaming.hold(caller.accountId, () => ExportsBusy.of())

    const links = (caller: Caller, domainId: number) =>
      requireAdmin(caller, domainId).pipe(Effect.zipRight(place(caller)), Effect.as(files.links(domainId)))

    const clicks = (caller: Caller, domainId: number, request: ClicksRequest) =>
      Effect.gen(function* () {
        if (caller.plan === "free") return yield* PlanWithoutAnalytics.of()
        yield* requireAdmin(caller, domainId)
        const file = yield* files.clicks(domainId, request)
        yield* place(caller)
        return file
      }).pipe(orDieOnInfrastructure)

    /** How many exports the account has streaming on this instance. */
    const exporting = (accountId: number) => streaming.count(accountId)

    return { links, clicks, exporting } as const
  }),
  dependencies: [ExportCsv.Default]
}) {}
