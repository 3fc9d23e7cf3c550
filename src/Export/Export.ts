import { Effect } from "effect"
import type { Caller } from "../Accounts/User.ts"
import { PlanWithoutAnalytics } from "../Analytics/AnalyticsErrors.ts"
import { DomainAccess } from "../Domains/DomainAccess.ts"
import { viewerOf } from "../Links/LinkAccess.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { ExportForbidden } from "./ExportErrors.ts"
import { type ClicksRequest, ExportCsv } from "./ExportCsv.ts"

/**
 * The exports of the API: for account admins and admins of the domain (10003 for other users of the
 * account; a domain of another account is 404 10101, as everywhere), disabled domains included.
 * The clicks export needs a plan with analytics (10504, checked first, as the reports do).
 */
export class Export extends Effect.Service<Export>()("Export", {
  effect: Effect.gen(function* () {
    const files = yield* ExportCsv
    const access = yield* DomainAccess

    const requireAdmin = (caller: Caller, domainId: number) =>
      Effect.flatMap(viewerOf(access, caller, domainId, { activeOnly: false }), (viewer) =>
        viewer.seesAll ? Effect.void : Effect.fail(ExportForbidden.of())
      )

    const links = (caller: Caller, domainId: number) => Effect.as(requireAdmin(caller, domainId), files.links(domainId))

    const clicks = (caller: Caller, domainId: number, request: ClicksRequest) =>
      Effect.gen(function* () {
        if (caller.plan === "free") return yield* PlanWithoutAnalytics.of()
        yield* requireAdmin(caller, domainId)
        return yield* files.clicks(domainId, request)
      }).pipe(orDieOnInfrastructure)

    return { links, clicks } as const
  }),
  dependencies: [ExportCsv.Default]
}) {}
