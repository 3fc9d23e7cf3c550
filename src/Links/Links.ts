import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import type { Caller } from "../Accounts/User.ts"
import { type Invalid, isInvalid } from "../Platform/Coded.ts"
import { InvalidInput } from "../Platform/Failure.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"
import { offsetOf, type PageRequest } from "../Platform/Pagination.ts"
import { UtmTemplateRepo } from "../Tags/UtmTemplateRepo.ts"
import { DomainAccess } from "../Domains/DomainAccess.ts"
import { DomainNotFound } from "../Domains/DomainErrors.ts"
import { Groups } from "../Groups/Groups.ts"
import { DestinationChanged } from "./DestinationChanged.ts"
import { viewerOf } from "./LinkAccess.ts"
import {
  AliasTaken,
  AliasTakenOnUpdate,
  type InputProblem,
  LinkNotFound,
  NoFreeAlias,
  NotDomainAdmin,
  problem,
  QuotaReached
} from "./LinkErrors.ts"
import type { CreateLinkInput, LinkOperation } from "./LinkFields.ts"
import { readCreateLink } from "./LinkInput.ts"
import { orderUtmValues, planLinkUpdate, readLinkPatch } from "./LinkPatch.ts"
import { LinkRepo, type Viewer } from "./LinkRepo.ts"
import { type QrFormat, QrRenderer } from "./QrRenderer.ts"
import { parseHttpUrl, parseMaybeEncodedHttpUrl } from "./Url.ts"
import { UrlChecker } from "./UrlChecker.ts"

/** Generated aliases tried before giving up: with 56^6 of them, a collision is already rare. */
const ALIAS_ATTEMPTS = 8

/** E6's filters, as given: `allUsers` asks for every user's links, not only the caller's. */
export interface LinkQuery {
  readonly allUsers: boolean
  readonly keyword?: string | undefined
  readonly url?: string | undefined
  readonly tag?: string | undefined
  /** A group's links; the group must be one of the domain's that the caller sees. */
  readonly groupId?: number | undefined
  readonly createdFrom?: number | undefined
  readonly createdTo?: number | undefined
  readonly newestFirst: boolean
  readonly page: PageRequest
}

const nowSeconds = Effect.map(Clock.currentTimeMillis, (millis) => Math.floor(millis / 1000))

/**
 * The links use cases (E4-E6, E11-E14). A caller sees the links of their account's domains that
 * they made; account admins and admins of a domain see all of its links. A link another caller may
 * not see is not found, as is a domain of another account.
 */
export class Links extends Effect.Service<Links>()("Links", {
  effect: Effect.gen(function* () {
    const repo = yield* LinkRepo
    const templates = yield* UtmTemplateRepo
    const checker = yield* UrlChecker
    const renderer = yield* QrRenderer
    const destinationChanged = yield* DestinationChanged
    const sql = yield* SqlClient.SqlClient
    const access = yield* DomainAccess
    const groups = yield* Groups

    const visible = <A>(found: Option.Option<A>) =>
      Option.match(found, { onNone: () => Effect.fail(LinkNotFound.of()), onSome: Effect.succeed })

    /** Also not found when the scheduler deleted the link since it was written. */
    const linkOf = (domainId: number, linkId: number, viewer: Viewer) => Effect.flatMap(repo.byId(domainId, linkId, viewer), visible)

    /** E5: the URL as E4 would store it; URL-encoded or plain. */
    const validate = (url: string | Invalid): Effect.Effect<string, InvalidInput> => {
      const parsed = isInvalid(url) ? undefined : parseMaybeEncodedHttpUrl(url)
      return parsed === undefined ? Effect.fail(InvalidInput.of(10100)) : Effect.succeed(parsed)
    }

    /** E11 */
    const get = (caller: Caller, domainId: number, linkId: number) =>
      Effect.flatMap(viewerOf(access, caller, domainId, { activeOnly: false }), (viewer) => linkOf(domainId, linkId, viewer)).pipe(
        orDieOnInfrastructure
      )

    /** E13: by alias, ignoring case. */
    const byAlias = (caller: Caller, domainId: number, alias: string) =>
      Effect.gen(function* () {
        const viewer = yield* viewerOf(access, caller, domainId, { activeOnly: false })
        if (alias === "" || alias.length > 255) return yield* Effect.fail(InvalidInput.of(10102))
        return yield* Effect.flatMap(repo.byAlias(domainId, alias, viewer), visible)
      }).pipe(orDieOnInfrastructure)

    /** E14: the QR code of the link's short link, marked `?qr=1` so its clicks can be told apart. */
    const qr = (caller: Caller, domainId: number, linkId: number, format: QrFormat) =>
      Effect.flatMap(get(caller, domainId, linkId), (link) => renderer.render(`${link.short_link}?qr=1`, format))

    /** E6: one page of the matching links, the number of all matches and the sum of their clicks. */
    const search = (caller: Caller, domainId: number, query: LinkQuery) =>
      Effect.gen(function* () {
        const viewer = yield* viewerOf(access, caller, domainId, { activeOnly: false })
        if (query.allUsers && !viewer.seesAll) return yield* Effect.fail(NotDomainAdmin.of())
        if (query.groupId !== undefined) yield* groups.requireVisible(caller, domainId, query.groupId)
        const url = query.url === undefined ? undefined : parseHttpUrl(query.url, { assumeHttp: true })
        if (query.url !== undefined && url === undefined) return yield* Effect.fail(InvalidInput.of(10122))
        return yield* repo.search({
          domainId,
          viewer,
          onlyOwn: !query.allUsers,
          keyword: query.keyword,
          url,
          tag: query.tag,
          groupId: query.groupId,
          createdFrom: query.createdFrom,
          createdTo: query.createdTo,
          newestFirst: query.newestFirst,
          limit: query.page.perPage,
          offset: offsetOf(query.page)
        })
      }).pipe(orDieOnInfrastructure)

    /** Counting locks the account's row, so concurrent creates cannot pass the quota together. */
    const withinQuota = (caller: Caller) => {
      const quota = caller.linkQuota
      if (quota === null) return Effect.void
      return Effect.flatMap(repo.countForQuota(caller.accountId), (count) =>
        count >= quota ? Effect.fail(QuotaReached.of()) : Effect.void
      )
    }

    /**
     * E4: the new link, or with `dupe_check` the caller's existing active link to the same url.
     * Every problem of the input is reported at once; then the 404 check, the quota, the alias.
     */
    const create = (caller: Caller, domainId: number, input: CreateLinkInput) =>
      Effect.gen(function* () {
        const viewer = yield* viewerOf(access, caller, domainId, { activeOnly: true })
        const draft = yield* readCreateLink(input, yield* nowSeconds, (id) =>
          templates.findOnDomain({ accountId: caller.accountId, domainId, id })
        )
        if (draft.checkUrl && (yield* checker.check(draft.url)) !== "ok") return yield* Effect.fail(InvalidInput.of(10100))
        if (draft.dupeCheck) {
          const existing = yield* repo.firstOwnByUrl(domainId, draft.url, viewer)
          if (Option.isSome(existing)) return { link: yield* linkOf(domainId, existing.value, viewer), created: false }
        }
        const insert = Effect.gen(function* () {
          for (let attempt = 0; attempt < ALIAS_ATTEMPTS; attempt++) {
            const alias = draft.alias ?? draft.generateAlias()
            const inserted = yield* repo.insert({ ...draft.link, alias, domainId, userId: caller.userId })
            if (Option.isSome(inserted)) return inserted.value
            if (yield* repo.domainDeleted(domainId)) return yield* Effect.fail(DomainNotFound.of())
            if (draft.alias !== undefined) return yield* Effect.fail(AliasTaken.of())
          }
          return yield* Effect.fail(NoFreeAlias.of("could not find a free alias; try a longer rand_alias_length"))
        })
        const write = Effect.gen(function* () {
          yield* withinQuota(caller)
          const link = yield* insert
          if (draft.tags.length > 0) yield* repo.attachTags(link.id, domainId, caller.userId, draft.tags)
          return link
        })
        // A single INSERT needs no transaction; a quota count or tags make it one unit.
        const inserted = caller.linkQuota === null && draft.tags.length === 0 ? yield* write : yield* sql.withTransaction(write)
        // The inserted row is answered as it is, unless tags were attached to it since.
        const link = draft.tags.length === 0 ? inserted : yield* linkOf(domainId, inserted.id, viewer)
        return { link, created: true }
      }).pipe(orDieOnInfrastructure)

    /**
     * E12: the operations applied all together or not at all; every problem reported at once, the
     * ones that need the database (alias taken) and the network (the 404 check of a new url) too.
     */
    const update = (caller: Caller, domainId: number, linkId: number, operations: ReadonlyArray<LinkOperation | Invalid>) =>
      Effect.gen(function* () {
        const viewer = yield* viewerOf(access, caller, domainId, { activeOnly: false })
        const before = yield* linkOf(domainId, linkId, viewer)
        const reading = readLinkPatch(operations, yield* nowSeconds)
        const { changes } = reading
        const problems: Array<InputProblem> = []
        // No override flag on E12: a new url gets the 404 check (and the address policy) always.
        if (changes.url !== undefined && changes.url !== before.url && (yield* checker.check(changes.url)) !== "ok") {
          problems.push(problem(10132))
        }
        yield* sql.withTransaction(
          Effect.gen(function* () {
            const stored = yield* Effect.flatMap(repo.lockForUpdate({ domainId, linkId, viewer }), visible)
            if (changes.alias !== undefined && (yield* repo.aliasTaken(domainId, changes.alias, stored.id))) {
              problems.push(AliasTakenOnUpdate.of(changes.alias))
            }
            const template =
              changes.url === undefined || stored.template_id === null
                ? Option.none()
                : yield* templates.findOnDomain({ accountId: caller.accountId, domainId, id: stored.template_id })
            const codes = Option.match(template, { onNone: () => [], onSome: (found) => found.fields.map((field) => field.field_code) })
            const plan = yield* planLinkUpdate(
              reading,
              { url: stored.url, archiveOn: stored.archive_on, deleteOn: stored.delete_on, utmValues: orderUtmValues(stored.utm_fields, codes) },
              problems
            )
            // A concurrent create or update can take the alias after the check above.
            if ((yield* repo.update(stored.id, plan)) === "alias_taken") return yield* Effect.fail(AliasTakenOnUpdate.of(changes.alias ?? ""))
          })
        )
        const after = yield* linkOf(domainId, linkId, viewer)
        if (after.redirect_url !== before.redirect_url) yield* destinationChanged(linkId)
        return after
      }).pipe(orDieOnInfrastructure)

    return { validate, get, byAlias, qr, search, create, update } as const
  }),
  dependencies: [LinkRepo.Default, UtmTemplateRepo.Default, QrRenderer.Default, UrlChecker.layer, DomainAccess.Default, Groups.Default]
}) {}
