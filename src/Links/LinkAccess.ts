import { Effect, Option } from "effect"
import type { Caller } from "../Accounts/User.ts"
import type { Viewer } from "./LinkRepo.ts"
import type { DomainAccess } from "../Domains/DomainAccess.ts"
import { DomainNotFound } from "../Domains/DomainErrors.ts"

/**
 * The caller's view of a domain's links: the domain must be the caller's account's (else
 * `DomainNotFound`, as if it did not exist), and its links of others are visible to account admins
 * and to admins of that domain.
 */
export const viewerOf = (access: DomainAccess, caller: Caller, domainId: number, options: { readonly activeOnly: boolean }) =>
  Effect.gen(function* () {
    const view = yield* access.view(caller, domainId)
    if (Option.isNone(view) || (options.activeOnly && !view.value.active)) return yield* Effect.fail(DomainNotFound.of())
    const viewer: Viewer = { accountId: caller.accountId, userId: caller.userId, seesAll: view.value.seesAll }
    return viewer
  })
