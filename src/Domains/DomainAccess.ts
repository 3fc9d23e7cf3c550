import { Effect, Option } from "effect"
import type { Caller } from "../Accounts/User.ts"
import { DomainRepo } from "./DomainRepo.ts"
import { announcedCache } from "../Sql/AnnouncedCache.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"

/** What a caller may do with one domain of the links API; `None` if it is not the caller's account's. */
export interface DomainView {
  readonly active: boolean
  /** Account admins and admins of this domain see all its links; others their own. */
  readonly seesAll: boolean
}

/** Entries kept in memory; past this the oldest goes. */
const CACHED_VIEWS = 10_000
/** How long an entry is trusted without a word from the database, as a backstop. */
const CACHE_SECONDS = 60

/**
 * The caller's view of a domain, read from the database once and then from memory. Any change to a
 * domain (`d:` announcements of `sql/0004_clicks.sql`), to users, accounts or domain admins (`auth`,
 * `sql/0006` and `sql/0007`) empties the cache: this instance hears it before the changing statement
 * returns, others within milliseconds.
 */
export class DomainAccess extends Effect.Service<DomainAccess>()("DomainAccess", {
  scoped: Effect.gen(function* () {
    const domains = yield* DomainRepo
    const cache = yield* announcedCache<Option.Option<DomainView>>({
      size: CACHED_VIEWS,
      seconds: CACHE_SECONDS,
      forgetOn: (payload) => payload === "auth" || payload.startsWith("d:")
    })

    const read = (caller: Caller, domainId: number) =>
      Effect.gen(function* () {
        const domain = yield* domains.byId({ accountId: caller.accountId, userId: caller.userId, id: domainId })
        if (Option.isNone(domain)) return Option.none()
        const seesAll = caller.role === "account_admin" || (yield* domains.isAdmin(caller.userId, domainId))
        return Option.some({ active: domain.value.status === "active", seesAll })
      })

    return {
      view: (caller: Caller, domainId: number): Effect.Effect<Option.Option<DomainView>> =>
        cache
          .through(`${caller.accountId}:${caller.userId}:${caller.role}:${domainId}`, read(caller, domainId))
          .pipe(orDieOnInfrastructure)
    }
  })
}) {}
