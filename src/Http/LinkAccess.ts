import { Effect, Option } from "effect"
import { ApiError } from "../Domain/ApiError.ts"
import type { Caller } from "../Domain/User.ts"
import { DomainRepo } from "../Repos/DomainRepo.ts"
import type { Viewer } from "../Repos/LinkRepo.ts"

/**
 * The caller's view of a domain's links: the domain must be the caller's account's (else 404 10101,
 * as if it did not exist), and its links of others are visible to account admins and to admins of
 * that domain (CONTRACT §4).
 */
export const viewerOf = (caller: Caller, domainId: number, options: { readonly activeOnly: boolean }) =>
  Effect.gen(function* () {
    const domains = yield* DomainRepo
    const domain = yield* domains.byId({ accountId: caller.accountId, userId: caller.userId, id: domainId })
    if (Option.isNone(domain) || (options.activeOnly && domain.value.status !== "active")) {
      return yield* ApiError.of(10101)
    }
    const seesAll = caller.role === "account_admin" || (yield* domains.isAdmin(caller.userId, domainId))
    const viewer: Viewer = { accountId: caller.accountId, userId: caller.userId, seesAll }
    return { viewer, domain: domain.value }
  })
