import { Effect } from "effect"
import type { Caller } from "./User.ts"
import { NotAccountAdmin } from "./AccountErrors.ts"
import { UserRepo } from "./UserRepo.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { offsetOf, type PageRequest } from "../Platform/Pagination.ts"

/** The users use case (U1): account admins list the users of their account; nobody sees another account's. */
export class Users extends Effect.Service<Users>()("Users", {
  effect: Effect.gen(function* () {
    const repo = yield* UserRepo

    /** U1: one page of the account's users by id, and how many there are. */
    const list = (caller: Caller, page: PageRequest) =>
      Effect.gen(function* () {
        if (caller.role !== "account_admin") return yield* Effect.fail(NotAccountAdmin.of())
        const rows = yield* repo.listOfAccount({ accountId: caller.accountId, limit: page.perPage, offset: offsetOf(page) })
        const total = rows[0]?.total ?? (yield* repo.countOfAccount(caller.accountId))
        return { users: rows.map((row) => row.toUser()), total }
      }).pipe(orDieOnInfrastructure)

    return { list } as const
  }),
  dependencies: [UserRepo.Default]
}) {}
