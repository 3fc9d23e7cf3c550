import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Option } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { ApiError, type ErrorItem } from "../Platform/ApiError.ts"
import type { Link } from "./Link.ts"
import { parseMaybeEncodedHttpUrl } from "./Url.ts"
import { UtmTemplateRepo } from "../Tags/UtmTemplateRepo.ts"
import { LinkRepo, type Viewer } from "./LinkRepo.ts"
import { QrRenderer } from "./QrRenderer.ts"
import { UrlChecker } from "./UrlChecker.ts"
import { readCreateLink } from "./LinkInput.ts"
import { orderUtmValues, planLinkUpdate, readLinkPatch } from "./LinkPatch.ts"
import { viewerOf } from "./LinkAccess.ts"
import { orDieOnInfrastructure } from "../Platform/Infrastructure.ts"

const ALIAS_ATTEMPTS = 8

export const LinksHttpLive = HttpApiBuilder.group(Api, "links", (handlers) =>
  Effect.gen(function* () {
    const links = yield* LinkRepo
    const checker = yield* UrlChecker
    const qr = yield* QrRenderer
    const sql = yield* SqlClient.SqlClient
    const templates = yield* UtmTemplateRepo

    /** The link, or 404 10150 (also for one the scheduler deleted just after it was written). */
    const orNotFound = (link: Option.Option<Link>) =>
      Option.match(link, { onNone: () => Effect.fail(ApiError.of(10150)), onSome: Effect.succeed })

    const linkById = (domainId: number, linkId: number, viewer: Viewer) =>
      Effect.flatMap(links.byId(domainId, linkId, viewer), orNotFound)

    return handlers
      .handle("validate", ({ payload }) => {
        const url = typeof payload.url === "string" ? parseMaybeEncodedHttpUrl(payload.url) : undefined
        return url === undefined ? Effect.fail(ApiError.of(10100)) : Effect.succeed({ objects: [{ url }] })
      })
      .handle("byId", ({ path }) =>
        Effect.gen(function* () {
          const viewer = yield* viewerOf(yield* CurrentUser, path.domain_id, { activeOnly: false })
          return { objects: [yield* linkById(path.domain_id, path.link_id, viewer)] }
        }).pipe(orDieOnInfrastructure)
      )
      .handle("qr", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const viewer = yield* viewerOf(yield* CurrentUser, path.domain_id, { activeOnly: false })
          const link = yield* linkById(path.domain_id, path.link_id, viewer)
          const image = yield* qr.render(`${link.short_link}?qr=1`, urlParams.format ?? "png")
          return HttpServerResponse.uint8Array(image.body, { contentType: image.contentType })
        }).pipe(orDieOnInfrastructure)
      )
      .handle("byAlias", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const viewer = yield* viewerOf(yield* CurrentUser, path.domain_id, { activeOnly: false })
          const alias = urlParams.alias ?? ""
          if (alias === "" || alias.length > 255) return yield* ApiError.of(10102)
          return { objects: [yield* orNotFound(yield* links.byAlias(path.domain_id, alias, viewer))] }
        }).pipe(orDieOnInfrastructure)
      )
      .handle("update", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentUser
          const viewer = yield* viewerOf(caller, path.domain_id, { activeOnly: false })
          const before = yield* links.byId(path.domain_id, path.link_id, viewer)
          if (Option.isNone(before)) return yield* ApiError.of(10150)
          const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          const reading = readLinkPatch(payload, now)
          const { changes } = reading
          // No override flag on E12: a new url gets the 404 check (and the address policy) always.
          const extra: Array<ErrorItem> = []
          if (changes.url !== undefined && changes.url !== before.value.url && (yield* checker.check(changes.url)) !== "ok") {
            extra.push(ApiError.item(10132))
          }
          yield* sql.withTransaction(
            Effect.gen(function* () {
              const stored = yield* links.lockForUpdate({ domainId: path.domain_id, linkId: path.link_id, viewer })
              if (Option.isNone(stored)) return yield* ApiError.of(10150)
              const link = stored.value
              if (changes.alias !== undefined && (yield* links.aliasTaken(path.domain_id, changes.alias, link.id))) {
                extra.push(ApiError.item(10140, changes.alias))
              }
              const template =
                changes.url === undefined || link.template_id === null
                  ? Option.none()
                  : yield* templates.findOnDomain({ accountId: caller.accountId, domainId: path.domain_id, id: link.template_id })
              const codes = Option.match(template, { onNone: () => [], onSome: (t) => t.fields.map((field) => field.field_code) })
              const plan = planLinkUpdate(reading, {
                url: link.url,
                archiveOn: link.archive_on,
                deleteOn: link.delete_on,
                utmValues: orderUtmValues(link.utm_fields, codes)
              }, extra)
              if (Either.isLeft(plan)) return yield* ApiError.all(plan.left)
              const outcome = yield* links.update(link.id, plan.right)
              if (outcome === "alias_taken") return yield* ApiError.of(10140, changes.alias ?? "")
            })
          )
          return { objects: [yield* linkById(path.domain_id, path.link_id, viewer)] }
        }).pipe(orDieOnInfrastructure)
      )
      .handle("create", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentUser
          const viewer = yield* viewerOf(caller, path.domain_id, { activeOnly: true })
          const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          const draft = yield* readCreateLink(payload, { accountId: caller.accountId, domainId: path.domain_id, now })
          if (draft.checkUrl) {
            const verdict = yield* checker.check(draft.url)
            if (verdict !== "ok") return yield* ApiError.of(10100)
          }
          if (draft.dupeCheck) {
            const existing = yield* links.firstOwnByUrl(path.domain_id, draft.url, viewer)
            if (Option.isSome(existing)) {
              return { objects: [yield* linkById(path.domain_id, existing.value, viewer)], new_link: false }
            }
          }
          const write = Effect.gen(function* () {
            const quota = caller.linkQuota
            if (quota !== null && (yield* links.countForQuota(caller.accountId)) >= quota) {
              return yield* ApiError.of(10144)
            }
            for (let attempt = 0; attempt < ALIAS_ATTEMPTS; attempt++) {
              const alias = draft.alias ?? draft.generateAlias()
              const created = yield* links.insert({ ...draft.link, alias, domainId: path.domain_id, userId: caller.userId })
              if (Option.isSome(created)) {
                if (draft.tags.length === 0) return created.value
                yield* links.attachTags(created.value.id, path.domain_id, caller.userId, draft.tags)
                return created.value.id
              }
              if (draft.alias !== undefined) return yield* ApiError.of(10104)
            }
            return yield* ApiError.of(10142, "could not find a free alias; try a longer rand_alias_length")
          })
          // A single INSERT needs no transaction; a quota count or tags make it one unit.
          const written = caller.linkQuota === null && draft.tags.length === 0 ? yield* write : yield* sql.withTransaction(write)
          const link = typeof written === "number" ? yield* linkById(path.domain_id, written, viewer) : written
          return { objects: [link], new_link: true }
        }).pipe(orDieOnInfrastructure)
      )
  })
)
