import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { ApiError, type ErrorItem } from "../Platform/ApiError.ts"
import type { Domain } from "./Domain.ts"
import { normaliseDomainName } from "./DomainName.ts"
import type { ErrorCode } from "../Platform/ErrorCatalogue.ts"
import { makeMeta, offsetOf } from "../Platform/Pagination.ts"
import { pageRequest } from "../Platform/ApiVersion.ts"
import { parseHttpUrl } from "../Links/Url.ts"
import type { Caller } from "../Accounts/User.ts"
import { type DomainChanges, DomainRepo } from "./DomainRepo.ts"
import { requestPath } from "../Platform/RequestUrl.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"

/** A full http(s) URL, or null (none) for null or "". */
const optionalUrl = (value: string | null | undefined) =>
  value === null || value === undefined || value === "" ? Option.some(null) : Option.fromNullable(parseHttpUrl(value, { assumeHttp: false }))

const requireAccountAdmin = (caller: Caller) =>
  caller.role === "account_admin" ? Effect.void : Effect.fail(ApiError.of(10003))

export const DomainsHttpLive = HttpApiBuilder.group(Api, "domains", (handlers) =>
  Effect.gen(function* () {
    const domains = yield* DomainRepo
    const sql = yield* SqlClient.SqlClient

    const visible = (caller: Caller, id: number) =>
      Effect.flatMap(domains.byId({ accountId: caller.accountId, userId: caller.userId, id }), (row) =>
        Option.match(row, { onNone: () => Effect.fail(ApiError.of(10101)), onSome: (row) => Effect.succeed(row.toDomain()) })
      )

    const single = (domain: Domain, path: string) =>
      Effect.map(pageRequest(1), (page) => ({ objects: [domain], meta: makeMeta(page, 1, 1, path) }))

    return handlers
      .handle("list", ({ urlParams, request }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentUser
          const path = requestPath(request)
          if (urlParams.domain_name !== undefined) {
            const name = normaliseDomainName(urlParams.domain_name)
            const row =
              name === undefined
                ? Option.none()
                : yield* domains.byName({ accountId: caller.accountId, userId: caller.userId, name })
            if (Option.isNone(row)) return yield* ApiError.of(10101)
            return yield* single(row.value.toDomain(), path)
          }
          const page = yield* pageRequest(urlParams.page)
          const rows = yield* domains.listActive({
            accountId: caller.accountId,
            userId: caller.userId,
            limit: page.perPage,
            offset: offsetOf(page)
          })
          const total = rows[0]?.total ?? (yield* domains.countActive(caller.accountId))
          return { objects: rows.map((row) => row.toDomain()), meta: makeMeta(page, rows.length, total, path) }
        }).pipe(orDieOnInfrastructure)
      )
      .handle("byId", ({ path, request }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentUser
          return yield* single(yield* visible(caller, path.domain_id), requestPath(request))
        }).pipe(orDieOnInfrastructure)
      )
      .handle("create", ({ payload, request }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentUser
          yield* requireAccountAdmin(caller)
          const name = normaliseDomainName(payload.domain)
          const url404 = optionalUrl(payload.url_404)
          const homepage = optionalUrl(payload.homepage)
          const problems: Array<ErrorItem> = []
          if (name === undefined) problems.push(ApiError.item(10400))
          if (Option.isNone(url404)) problems.push(ApiError.item(10402))
          if (Option.isNone(homepage)) problems.push(ApiError.item(10403))
          const [first, ...rest] = problems
          if (first !== undefined) return yield* ApiError.all([first, ...rest])
          const id = yield* sql.withTransaction(
            Effect.gen(function* () {
              const created = yield* domains.create({
                accountId: caller.accountId,
                domain: name!,
                url_404: Option.getOrNull(url404),
                homepage: Option.getOrNull(homepage)
              })
              if (Option.isNone(created)) return yield* ApiError.of(10401, name!)
              if (payload.default === true) yield* domains.setDefault(caller.userId, created.value)
              return created.value
            })
          )
          return yield* single(yield* visible(caller, id), requestPath(request))
        }).pipe(orDieOnInfrastructure)
      )
      .handle("update", ({ path, payload, request }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentUser
          yield* visible(caller, path.domain_id)
          yield* requireAccountAdmin(caller)
          const changes = yield* domainChange(payload.op, payload.path, payload.value)
          yield* domains.update(caller.accountId, path.domain_id, changes)
          return yield* single(yield* visible(caller, path.domain_id), requestPath(request))
        }).pipe(orDieOnInfrastructure)
      )
  })
)

/** E10's one operation as a change, or the code of what is wrong with it (CONTRACT §8). */
const domainChange = (op: string, path: string, value: string | null | undefined) => {
  const fail = (code: ErrorCode, arg: string) => Effect.fail(ApiError.of(code, arg))
  if (op !== "replace") return fail(10404, op)
  switch (path) {
    case "status":
      return value === "active" || value === "disabled"
        ? Effect.succeed<DomainChanges>({ status: value })
        : fail(10406, path)
    case "homepage":
    case "url_404": {
      const url = optionalUrl(value)
      return Option.isNone(url) ? fail(10406, path) : Effect.succeed<DomainChanges>({ [path]: url.value })
    }
    default:
      return fail(10405, path)
  }
}
