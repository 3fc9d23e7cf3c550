import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { Caller } from "../Accounts/User.ts"
import { InvalidInput } from "../Platform/Failure.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { offsetOf, type PageRequest } from "../Platform/Pagination.ts"
import { parseHttpUrl } from "../Links/Url.ts"
import type { Domain } from "./Domain.ts"
import {
  DomainExists,
  DomainNotFound,
  UpdateOperationUnsupported,
  UpdatePathUnsupported,
  UpdateValueInvalid
} from "./DomainErrors.ts"
import { NotAccountAdmin } from "../Accounts/AccountErrors.ts"
import { AppConfig } from "../Config.ts"
import { normaliseDomainName } from "./DomainName.ts"
import { type DomainChanges, DomainRepo } from "./DomainRepo.ts"

export interface CreateDomainInput {
  readonly domain: string
  readonly default?: boolean | undefined
  readonly url_404?: string | null | undefined
  readonly homepage?: string | null | undefined
}

/** E10's one operation: `replace` of `status`, `homepage` or `url_404`. */
export interface DomainOperation {
  readonly op: string
  readonly path: string
  readonly value?: string | null | undefined
}

/** A full http(s) URL, or null (none) for null or ""; `None` when it is neither. */
const optionalUrl = (value: string | null | undefined): Option.Option<string | null> =>
  value === null || value === undefined || value === "" ? Option.some(null) : Option.fromNullable(parseHttpUrl(value, { assumeHttp: false }))

const requireAccountAdmin = (caller: Caller) => (caller.role === "account_admin" ? Effect.void : Effect.fail(NotAccountAdmin.of()))

const changeOf = (operation: DomainOperation) => {
  const { op, path, value } = operation
  if (op !== "replace") return Effect.fail(UpdateOperationUnsupported.of("given in op"))
  switch (path) {
    case "status":
      return value === "active" || value === "disabled"
        ? Effect.succeed<DomainChanges>({ status: value })
        : Effect.fail(UpdateValueInvalid.of(path))
    case "homepage":
    case "url_404": {
      const url = optionalUrl(value)
      return Option.isNone(url) ? Effect.fail(UpdateValueInvalid.of(path)) : Effect.succeed<DomainChanges>({ [path]: url.value })
    }
    default:
      return Effect.fail(UpdatePathUnsupported.of("given in path"))
  }
}

/**
 * The domains use cases (E3, E7-E10): what a caller sees of the short domains of their account, and
 * how account admins create and change them. Nothing of another account is ever visible.
 */
export class Domains extends Effect.Service<Domains>()("Domains", {
  effect: Effect.gen(function* () {
    const repo = yield* DomainRepo
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    /** A URL not given on create takes the install's default; an explicit null or "" means none. */
    const orDefault = (given: string | null | undefined, fallback: Option.Option<string>) =>
      given === undefined ? Option.getOrNull(fallback) : given

    const byId = (caller: Caller, id: number): Effect.Effect<Domain, DomainNotFound> =>
      repo.byId({ accountId: caller.accountId, userId: caller.userId, id }).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(DomainNotFound.of()), onSome: (row) => Effect.succeed(row.toDomain()) })),
        orDieOnInfrastructure
      )

    /** E8: a domain of the caller's account by name (any case, IDN or punycode). */
    const byName = (caller: Caller, name: string): Effect.Effect<Domain, DomainNotFound> => {
      const normalised = normaliseDomainName(name)
      if (normalised === undefined) return Effect.fail(DomainNotFound.of())
      return repo.byName({ accountId: caller.accountId, userId: caller.userId, name: normalised }).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(DomainNotFound.of()), onSome: (row) => Effect.succeed(row.toDomain()) })),
        orDieOnInfrastructure
      )
    }

    const listActive = (caller: Caller, page: PageRequest) =>
      Effect.gen(function* () {
        const rows = yield* repo.listActive({ accountId: caller.accountId, userId: caller.userId, limit: page.perPage, offset: offsetOf(page) })
        const total = rows[0]?.total ?? (yield* repo.countActive(caller.accountId))
        return { domains: rows.map((row) => row.toDomain()), total, page }
      }).pipe(orDieOnInfrastructure)

    /**
     * E3: one page of the caller's active domains and how many there are, or, given a name, the
     * caller's domain of that name (not deleted, else 10101) as page 1 of one; with the page answered.
     */
    const list = (caller: Caller, request: { readonly domainName: string | undefined; readonly page: PageRequest }) =>
      request.domainName === undefined
        ? listActive(caller, request.page)
        : Effect.map(byName(caller, request.domainName), (domain) => ({ domains: [domain], total: 1, page: { ...request.page, page: 1 } }))

    /** E9: every problem of the input reported at once; `default` makes it the caller's default domain. */
    const create = (caller: Caller, input: CreateDomainInput) =>
      Effect.gen(function* () {
        yield* requireAccountAdmin(caller)
        const name = normaliseDomainName(input.domain)
        const url404 = optionalUrl(orDefault(input.url_404, config.defaultUrl404))
        const homepage = optionalUrl(orDefault(input.homepage, config.defaultHomepage))
        if (name === undefined || Option.isNone(url404) || Option.isNone(homepage)) {
          const problems = [
            ...(name === undefined ? [10400 as const] : []),
            ...(Option.isNone(url404) ? [10402 as const] : []),
            ...(Option.isNone(homepage) ? [10403 as const] : [])
          ]
          return yield* Effect.fail(InvalidInput.of(problems[0] ?? 10400, ...problems.slice(1)))
        }
        const id = yield* sql.withTransaction(
          Effect.gen(function* () {
            const created = yield* repo.create({
              accountId: caller.accountId,
              domain: name,
              url_404: url404.value,
              homepage: homepage.value
            })
            if (Option.isNone(created)) return yield* Effect.fail(DomainExists.of(name))
            if (input.default === true) yield* repo.setDefault(caller.userId, created.value)
            return created.value
          })
        )
        return yield* byId(caller, id).pipe(Effect.catchTag("DomainNotFound", Effect.die))
      }).pipe(orDieOnInfrastructure)

    /** E10: one `replace` of status, homepage or url_404, by an account admin. */
    const update = (caller: Caller, id: number, operation: DomainOperation) =>
      Effect.gen(function* () {
        yield* byId(caller, id)
        yield* requireAccountAdmin(caller)
        const changes = yield* changeOf(operation)
        yield* repo.update(caller.accountId, id, changes)
        return yield* byId(caller, id)
      }).pipe(orDieOnInfrastructure)

    /**
     * D1: the domain and all its links deleted together, by an account admin. Its name is free again
     * and every instance stops redirecting for it when the change is announced (`d:<name>`).
     */
    const remove = (caller: Caller, id: number) =>
      Effect.gen(function* () {
        yield* byId(caller, id)
        yield* requireAccountAdmin(caller)
        if (!(yield* sql.withTransaction(repo.remove(caller.accountId, id)))) return yield* Effect.fail(DomainNotFound.of())
      }).pipe(orDieOnInfrastructure)

    return { byId, list, create, update, remove } as const
  }),
  dependencies: [DomainRepo.Default]
}) {}
