import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { AdminError } from "../Accounts/AdminError.ts"
import type { Caller } from "../Accounts/User.ts"
import { DomainAccess } from "../Domains/DomainAccess.ts"
import { DomainNotFound } from "../Domains/DomainErrors.ts"
import { codePointLength } from "../Links/InputValues.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { offsetOf, type PageRequest } from "../Platform/Pagination.ts"
import { MAX_GROUP_NAME_LENGTH } from "./Group.ts"
import { GroupNotFound } from "./GroupErrors.ts"
import { GroupRepo } from "./GroupRepo.ts"

export interface NewGroup {
  readonly domainId: number
  readonly name: string
  readonly global: boolean
  /** The creator (`user_id`); by default the account admin with the lowest id. */
  readonly owner?: number | undefined
  /** Users who see the group besides its creator (all of the account do when it is global). */
  readonly users: ReadonlyArray<number>
}

const refused = (message: string) => new AdminError({ message })

const ascending = (ids: ReadonlyArray<number>) => [...new Set(ids)].sort((a, b) => a - b)

/**
 * Groups of links of a domain (G1; made and filled by the operator). A caller sees a group when its
 * domain is their account's and not deleted, and the group is global, theirs, or lists them.
 */
export class Groups extends Effect.Service<Groups>()("Groups", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* GroupRepo
    const access = yield* DomainAccess

    const requireDomain = (caller: Caller, domainId: number) =>
      Effect.flatMap(access.view(caller, domainId), (view) => (Option.isSome(view) ? Effect.void : Effect.fail(DomainNotFound.of())))

    /** G1: a page of the domain's groups the caller sees, by id, and how many there are. */
    const list = (caller: Caller, domainId: number, page: PageRequest) =>
      Effect.gen(function* () {
        yield* requireDomain(caller, domainId)
        const viewer = { domainId, userId: caller.userId }
        const rows = yield* repo.listVisible({ ...viewer, limit: page.perPage, offset: offsetOf(page) })
        const total = rows[0]?.total ?? (yield* repo.countVisible(viewer))
        return { groups: rows.map((row) => row.toGroup()), total }
      }).pipe(orDieOnInfrastructure)

    /** The group exists on that domain and the caller sees it (a `group_id` filter), else `GroupNotFound`. */
    const requireVisible = (caller: Caller, domainId: number, groupId: number): Effect.Effect<void, GroupNotFound> =>
      repo.isVisible({ accountId: caller.accountId, userId: caller.userId, domainId, groupId }).pipe(
        Effect.flatMap((visible) => (visible ? Effect.void : Effect.fail(GroupNotFound.of()))),
        orDieOnInfrastructure
      )

    // The operator's operations below keep database failures as failures: the admin CLI reports them in one line.

    const requireLiveDomain = (domainId: number) =>
      Effect.flatMap(repo.isLiveDomain(domainId), (live) => (live ? Effect.void : Effect.fail(refused(`there is no domain ${domainId}`))))

    const requireGroup = (groupId: number) =>
      Effect.flatMap(
        repo.findById(groupId),
        Option.match({ onNone: () => Effect.fail(refused(`there is no group ${groupId}`)), onSome: Effect.succeed })
      )

    /** Those of `userIds` who are not users of the domain's account. */
    const strangers = (domainId: number, userIds: ReadonlyArray<number>) =>
      Effect.map(repo.usersOfDomainAccount(domainId, userIds), (found) => userIds.filter((id) => !found.includes(id)))

    const notUsers = (domainId: number, ids: ReadonlyArray<number>) =>
      refused(`${ids.length === 1 ? `user ${ids[0]} is not a user` : `users ${ids.join(", ")} are not users`} of the account of domain ${domainId}`)

    /** A group of a domain that is not deleted, owned and seen by users of the domain's account. */
    const create = (input: NewGroup) =>
      Effect.gen(function* () {
        const name = input.name.trim()
        const length = codePointLength(name)
        if (length === 0 || length > MAX_GROUP_NAME_LENGTH) {
          return yield* refused(`the group name must have 1 to ${MAX_GROUP_NAME_LENGTH} characters`)
        }
        yield* requireLiveDomain(input.domainId)
        const owner = input.owner ?? Option.getOrUndefined(yield* repo.firstAccountAdmin(input.domainId))
        if (owner === undefined) return yield* refused(`the account of domain ${input.domainId} has no account admin to own the group; name an owner`)
        if ((yield* strangers(input.domainId, [owner])).length > 0) {
          return yield* refused(`the owner, user ${owner}, is not a user of the account of domain ${input.domainId}`)
        }
        const users = ascending(input.users)
        const outsiders = yield* strangers(input.domainId, users)
        if (outsiders.length > 0) return yield* notUsers(input.domainId, outsiders)
        const id = yield* sql.withTransaction(
          Effect.gen(function* () {
            const created = yield* repo.create({ domainId: input.domainId, userId: owner, name, isGlobal: input.global })
            if (Option.isNone(created)) {
              return yield* refused(`domain ${input.domainId} already has a group named "${name}" (names are unique per domain, ignoring case)`)
            }
            yield* repo.addMembers("users", created.value, users)
            return created.value
          })
        )
        return yield* Effect.flatten(repo.findById(id))
      })

    /** Puts a link of the group's domain (not deleted) in the group; a link already in it stays as it is. */
    const addLink = (groupId: number, linkId: number) =>
      Effect.gen(function* () {
        const group = yield* requireGroup(groupId)
        if (!(yield* repo.isLiveLinkOf(group.domain_id, linkId))) {
          return yield* refused(`there is no link ${linkId} on domain ${group.domain_id}, the domain of group ${groupId}`)
        }
        yield* repo.addMembers("links", groupId, [linkId])
        return { group_id: groupId, link_id: linkId }
      })

    /** Lists a user of the account in the group; a user already listed stays as they are. */
    const addUser = (groupId: number, userId: number) =>
      Effect.gen(function* () {
        const group = yield* requireGroup(groupId)
        if ((yield* strangers(group.domain_id, [userId])).length > 0) return yield* notUsers(group.domain_id, [userId])
        yield* repo.addMembers("users", groupId, [userId])
        return { group_id: groupId, user_id: userId }
      })

    /** Every group of the domain, whoever sees it. */
    const listAll = (domainId: number) =>
      Effect.zipRight(requireLiveDomain(domainId), repo.listByDomain(domainId))

    return { list, requireVisible, create, addLink, addUser, listAll } as const
  }),
  dependencies: [GroupRepo.Default, DomainAccess.Default]
}) {}
