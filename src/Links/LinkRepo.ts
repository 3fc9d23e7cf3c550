import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Link, LinkStatus, LinkTag, shortLinkOf } from "./Link.ts"
import { unlessNull } from "../Platform/Unset.ts"
import { violatesUniqueIndex } from "../Sql/Constraints.ts"
import { groupVisibleTo } from "../Groups/GroupRepo.ts"

/** Host and path of a stored redirect URL (always an absolute http(s) URL). */
const redirectParts = (redirectUrl: string) => {
  try {
    const url = new URL(redirectUrl)
    return { redirect_url_domain: url.hostname, redirect_url_path: url.pathname }
  } catch {
    return { redirect_url_domain: "", redirect_url_path: "" }
  }
}

class LinkRow extends Schema.Class<LinkRow>("LinkRow")({
  id: Schema.Int,
  domain_id: Schema.Int,
  user_id: Schema.Int,
  url: Schema.String,
  alias: Schema.String,
  redirect_url: Schema.String,
  notes: Schema.String,
  notify_on_click: Schema.Boolean,
  redirect_type: Schema.Literal(301, 307),
  status: LinkStatus,
  template_id: Schema.NullOr(Schema.Int),
  archive_on: Schema.NullOr(Schema.Int),
  delete_on: Schema.NullOr(Schema.Int),
  click_count: Schema.Int,
  created: Schema.Int,
  modified: Schema.Int,
  domain: Schema.String,
  has_ssl: Schema.Boolean,
  tags: Schema.Array(LinkTag),
  groups: Schema.Array(Schema.Int)
}) {
  /** Built unchecked: every field comes from this decoded row, and the answer's encoding checks it again. */
  toLink(): Link {
    const { domain, has_ssl, notify_on_click, template_id, archive_on, delete_on, ...rest } = this
    return new Link({
      ...rest,
      ...unlessNull({ template_id, archive_on, delete_on }),
      short_link: shortLinkOf(has_ssl, domain, this.alias),
      ...redirectParts(this.redirect_url),
      notify_on_click: notify_on_click ? "1" : "0"
    }, true)
  }
}

/** Links `l` whose alias, notes or redirect URL contain the keyword, ignoring case. */
export const keywordMatch = (sql: SqlClient.SqlClient, keyword: string) =>
  sql`(position(lower(${keyword}) IN lower(l.alias)) > 0 OR position(lower(${keyword}) IN lower(l.notes)) > 0
       OR position(lower(${keyword}) IN lower(l.redirect_url)) > 0)`

/** Links `l` carrying a tag of that name, ignoring case. */
export const taggedWith = (sql: SqlClient.SqlClient, name: string) =>
  sql`EXISTS (SELECT 1 FROM link_tags lt JOIN tags t ON t.id = lt.tag_id WHERE lt.link_id = l.id AND lower(t.name) = lower(${name}))`

/** Links `l` in the group. */
export const inGroup = (sql: SqlClient.SqlClient, groupId: number) =>
  sql`EXISTS (SELECT 1 FROM link_group_links gl WHERE gl.link_id = l.id AND gl.group_id = ${groupId})`

/** A link as E16 lists it: its fields and its latest click (`YYYY-MM-DD HH:MM:SS` UTC). */
class ClickedLinkRow extends LinkRow.extend<ClickedLinkRow>("ClickedLinkRow")({
  last_clicked: Schema.NullOr(Schema.String)
}) {}

/** E6's filters; `onlyOwn` keeps the viewer's own links even when they may see all. */
export interface LinkSearch {
  readonly domainId: number
  readonly viewer: Viewer
  readonly onlyOwn: boolean
  readonly keyword: string | undefined
  readonly url: string | undefined
  readonly tag: string | undefined
  readonly groupId: number | undefined
  readonly createdFrom: number | undefined
  readonly createdTo: number | undefined
  readonly newestFirst: boolean
  readonly limit: number
  readonly offset: number
}

/** Who asks: links of others are visible only to those who administer the domain. */
export const Viewer = Schema.Struct({ accountId: Schema.Int, userId: Schema.Int, seesAll: Schema.Boolean })
export type Viewer = typeof Viewer.Type

export interface NewLink {
  readonly domainId: number
  readonly userId: number
  readonly url: string
  readonly alias: string
  readonly redirectUrl: string
  readonly notes: string
  readonly notifyOnClick: boolean
  readonly redirectType: 301 | 307
  readonly templateId: number | null
  readonly utmFields: Record<string, string> | null
  readonly archiveOn: number | null
  readonly deleteOn: number | null
}

/** What E12 needs of a link before changing it. */
export class StoredLinkRow extends Schema.Class<StoredLinkRow>("StoredLinkRow")({
  id: Schema.Int,
  url: Schema.String,
  alias: Schema.String,
  template_id: Schema.NullOr(Schema.Int),
  utm_fields: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
  archive_on: Schema.NullOr(Schema.Int),
  delete_on: Schema.NullOr(Schema.Int)
}) {}

/** The fields E12 changes; absent ones stay. A null date clears it. */
export interface LinkUpdateRow {
  readonly url?: string
  readonly redirectUrl?: string
  readonly alias?: string
  readonly notes?: string
  readonly notifyOnClick?: boolean
  readonly archiveOn?: number | null
  readonly deleteOn?: number | null
}

export class LinkRepo extends Effect.Service<LinkRepo>()("LinkRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const epoch = (column: string) => sql.unsafe(`floor(extract(epoch FROM l.${column}))::int8 AS ${column}`)
    const columns = sql`
      l.id, l.domain_id, l.user_id, l.url, l.alias, l.redirect_url, l.notes, l.notify_on_click,
             l.redirect_type, l.status, l.template_id, l.click_count,
             ${epoch("archive_on")}, ${epoch("delete_on")}, ${epoch("created")}, ${epoch("modified")},
             d.domain, d.has_ssl`
    const tags = sql`
      coalesce((SELECT json_agg(json_build_object('name', t.name, 'shared', t.shared) ORDER BY lower(t.name))
                FROM link_tags lt JOIN tags t ON t.id = lt.tag_id WHERE lt.link_id = l.id), '[]') AS tags`
    /** The ids of the link's groups that the user sees (global ones, their own, those they are listed in). */
    const groups = (userId: number) => sql`
      coalesce((SELECT json_agg(g.id ORDER BY g.id) FROM link_group_links gl JOIN link_groups g ON g.id = gl.group_id
                WHERE gl.link_id = l.id AND ${groupVisibleTo(sql, userId)}), '[]') AS groups`
    const select = (viewer: Viewer) =>
      sql`SELECT ${columns}, ${tags}, ${groups(viewer.userId)} FROM links l JOIN domains d ON d.id = l.domain_id`

    const visibleTo = (viewer: Viewer) =>
      sql`l.status <> 'deleted' AND d.account_id = ${viewer.accountId}
          AND (${viewer.seesAll} OR l.user_id = ${viewer.userId})`

    const findById = SqlSchema.findOne({
      Request: Schema.Struct({ domainId: Schema.Int, linkId: Schema.Int, viewer: Viewer }),
      Result: LinkRow,
      execute: ({ domainId, linkId, viewer }) =>
        sql`${select(viewer)} WHERE l.id = ${linkId} AND l.domain_id = ${domainId} AND ${visibleTo(viewer)}`
    })

    const findByAlias = SqlSchema.findOne({
      Request: Schema.Struct({ domainId: Schema.Int, alias: Schema.String, viewer: Viewer }),
      Result: LinkRow,
      execute: ({ domainId, alias, viewer }) =>
        sql`${select(viewer)} WHERE l.domain_id = ${domainId} AND lower(l.alias) = lower(${alias}) AND ${visibleTo(viewer)}`
    })

    const toLink = Option.map((row: LinkRow) => row.toLink())

    const byId = (domainId: number, linkId: number, viewer: Viewer) =>
      Effect.map(findById({ domainId, linkId, viewer }), toLink)

    const byAlias = (domainId: number, alias: string, viewer: Viewer) =>
      Effect.map(findByAlias({ domainId, alias, viewer }), toLink)

    /**
     * The new link (with no tags yet), or none when its alias is taken on the domain (ignoring case)
     * or the domain is deleted. The domain row is share-locked, so a concurrent domain delete either
     * waits for this link (and deletes it too) or is seen by it.
     */
    const decodeRow = Schema.decodeUnknown(LinkRow)
    const insert = (input: NewLink) =>
      Effect.flatMap(
        sql`
        WITH live AS (SELECT id FROM domains WHERE id = ${input.domainId} AND status <> 'deleted' FOR SHARE),
        l AS (
          INSERT INTO links (domain_id, user_id, url, alias, redirect_url, notes, notify_on_click, redirect_type,
                             template_id, utm_fields, archive_on, delete_on)
          SELECT live.id, ${input.userId}, ${input.url}, ${input.alias}, ${input.redirectUrl},
                 ${input.notes}, ${input.notifyOnClick}, ${input.redirectType}, ${input.templateId},
                 ${input.utmFields === null ? null : JSON.stringify(input.utmFields)}::jsonb,
                 to_timestamp(${input.archiveOn}), to_timestamp(${input.deleteOn})
          FROM live
          ON CONFLICT (domain_id, lower(alias)) WHERE status <> 'deleted' DO NOTHING
          RETURNING *
        )
        SELECT ${columns}, '[]'::json AS tags, '[]'::json AS groups FROM l JOIN domains d ON d.id = l.domain_id`,
        (rows) => (rows.length === 0 ? Effect.succeedNone : Effect.map(decodeRow(rows[0]), (row) => Option.some(row.toLink())))
      )

    /** Tags by name on the link's domain: existing ones (ignoring case) are reused, others created. */
    const attachTags = (linkId: number, domainId: number, userId: number, tags: ReadonlyArray<LinkTag>) =>
      Effect.forEach(
        tags,
        (tag) => sql`
          WITH tag AS (
            INSERT INTO tags (domain_id, user_id, name, shared) VALUES (${domainId}, ${userId}, ${tag.name}, ${tag.shared})
            ON CONFLICT (domain_id, lower(name)) DO UPDATE SET name = tags.name
            RETURNING id
          )
          INSERT INTO link_tags (link_id, tag_id) SELECT ${linkId}, id FROM tag ON CONFLICT DO NOTHING`,
        { discard: true }
      )

    const domainDeleted = (domainId: number) =>
      Effect.map(
        sql<{ n: number }>`SELECT count(*)::int8 AS n FROM domains WHERE id = ${domainId} AND status = 'deleted'`,
        (rows) => (rows[0]?.n ?? 0) > 0
      )

    /** Links of the account that count against its quota; locks the account row until the transaction ends. */
    const countForQuota = (accountId: number) =>
      Effect.gen(function* () {
        yield* sql`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`
        const rows = yield* sql<{ n: number }>`
          SELECT count(*)::int8 AS n FROM links l JOIN domains d ON d.id = l.domain_id
          WHERE d.account_id = ${accountId} AND l.status <> 'deleted'`
        return rows[0]?.n ?? 0
      })

    /** The viewer's own first active link to `url` on the domain (`dupe_check`). */
    const firstOwnByUrl = (domainId: number, url: string, viewer: Viewer) =>
      Effect.map(
        sql<{ id: number }>`
          SELECT id FROM links
          WHERE domain_id = ${domainId} AND user_id = ${viewer.userId} AND url = ${url} AND status = 'active'
          ORDER BY id LIMIT 1`,
        (rows) => Option.fromNullable(rows[0]?.id)
      )

    /** The link as the viewer sees it, locked until the transaction ends (E12). */
    const lockForUpdate = SqlSchema.findOne({
      Request: Schema.Struct({ domainId: Schema.Int, linkId: Schema.Int, viewer: Viewer }),
      Result: StoredLinkRow,
      execute: ({ domainId, linkId, viewer }) => sql`
        SELECT l.id, l.url, l.alias, l.template_id, l.utm_fields, ${epoch("archive_on")}, ${epoch("delete_on")}
        FROM links l JOIN domains d ON d.id = l.domain_id
        WHERE l.id = ${linkId} AND l.domain_id = ${domainId} AND ${visibleTo(viewer)}
        FOR UPDATE OF l`
    })

    /** Whether another non-deleted link of the domain has the alias, ignoring case. */
    const aliasTaken = (domainId: number, alias: string, exceptLinkId: number) =>
      Effect.map(
        sql<{ id: number }>`
          SELECT id FROM links
          WHERE domain_id = ${domainId} AND lower(alias) = lower(${alias}) AND id <> ${exceptLinkId} AND status <> 'deleted'
          LIMIT 1`,
        (rows) => rows.length > 0
      )

    /**
     * One UPDATE of the given fields, `modified` set to now: "updated", or "alias_taken" when the
     * alias unique index refuses it (a concurrent create or update took it first).
     */
    const update = (linkId: number, changes: LinkUpdateRow) => {
      const sets = [sql`modified = now()`]
      if (changes.url !== undefined) sets.push(sql`url = ${changes.url}`)
      if (changes.redirectUrl !== undefined) sets.push(sql`redirect_url = ${changes.redirectUrl}`)
      if (changes.alias !== undefined) sets.push(sql`alias = ${changes.alias}`)
      if (changes.notes !== undefined) sets.push(sql`notes = ${changes.notes}`)
      if (changes.notifyOnClick !== undefined) sets.push(sql`notify_on_click = ${changes.notifyOnClick}`)
      if (changes.archiveOn !== undefined) sets.push(sql`archive_on = to_timestamp(${changes.archiveOn})`)
      if (changes.deleteOn !== undefined) sets.push(sql`delete_on = to_timestamp(${changes.deleteOn})`)
      return sql`UPDATE links SET ${sql.csv(sets)} WHERE id = ${linkId}`.pipe(
        Effect.as("updated" as const),
        Effect.catchIf(
          (error) => violatesUniqueIndex(error, "links_alias"),
          () => Effect.succeed("alias_taken" as const)
        )
      )
    }

    const searchFilter = (q: LinkSearch) => {
      const conditions = [
        sql`l.domain_id = ${q.domainId}`,
        visibleTo(q.viewer),
        ...(q.onlyOwn ? [sql`l.user_id = ${q.viewer.userId}`] : []),
        ...(q.keyword === undefined || q.keyword === "" ? [] : [keywordMatch(sql, q.keyword)]),
        ...(q.url === undefined ? [] : [sql`l.url = ${q.url}`]),
        ...(q.tag === undefined ? [] : [taggedWith(sql, q.tag)]),
        ...(q.groupId === undefined ? [] : [inGroup(sql, q.groupId)]),
        ...(q.createdFrom === undefined ? [] : [sql`l.created >= to_timestamp(${q.createdFrom})`]),
        ...(q.createdTo === undefined ? [] : [sql`l.created < to_timestamp(${q.createdTo})`])
      ]
      return sql.and(conditions)
    }

    /**
     * A page of matching links, the number of all matches and the sum of their clicks. Matches are
     * counted on bare rows; only the page's rows are built in full (tags, timestamps).
     */
    const search = (q: LinkSearch) =>
      Effect.gen(function* () {
        const direction = q.newestFirst ? sql.unsafe("DESC") : sql.unsafe("ASC")
        const [totals] = yield* sql<{ total: number; clicks: number }>`
          SELECT count(*)::int8 AS total, coalesce(sum(l.click_count), 0)::int8 AS clicks
          FROM links l JOIN domains d ON d.id = l.domain_id WHERE ${searchFilter(q)}`
        const total = totals?.total ?? 0
        if (total <= q.offset) return { links: [], total, clicks: totals?.clicks ?? 0 }
        const rows = yield* SqlSchema.findAll({
          Request: Schema.Void,
          Result: LinkRow,
          execute: () => sql`
            ${select(q.viewer)}
            WHERE l.id IN (
              SELECT l.id FROM links l JOIN domains d ON d.id = l.domain_id WHERE ${searchFilter(q)}
              ORDER BY l.id ${direction} LIMIT ${q.limit} OFFSET ${q.offset}
            )
            ORDER BY l.id ${direction}`
        })(undefined)
        return { links: rows.map((row) => row.toLink()), total, clicks: totals?.clicks ?? 0 }
      })

    /** The links of these ids with their latest click, in the order of `ids`. */
    const clickedByIds = (ids: ReadonlyArray<number>, viewer: Viewer) =>
      Effect.map(
        ids.length === 0
          ? Effect.succeed([])
          : SqlSchema.findAll({
              Request: Schema.Array(Schema.Int),
              Result: ClickedLinkRow,
              execute: (ids) => sql`
                SELECT ${columns}, ${tags}, ${groups(viewer.userId)},
                       to_char(l.last_clicked AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS last_clicked
                FROM links l JOIN domains d ON d.id = l.domain_id
                WHERE ${sql.in("l.id", ids)}`
            })(ids),
        (rows) => {
          const byId = new Map(rows.map((row) => [row.id, row]))
          return ids.flatMap((id) => {
            const row = byId.get(id)
            if (row === undefined) return []
            const { notify_on_click: _, ...link } = row.toLink()
            return [{ ...link, lifetime_count: row.click_count, last_clicked: row.last_clicked }]
          })
        }
      )

    /**
     * The links of these ids whatever their status (webhook events), each with the groups its owner
     * sees, as version 4 answers them.
     */
    const forEvents = (ids: ReadonlyArray<number>) =>
      ids.length === 0
        ? Effect.succeed<ReadonlyArray<Link>>([])
        : Effect.map(
            SqlSchema.findAll({
              Request: Schema.Array(Schema.Int),
              Result: LinkRow,
              execute: (ids) => sql`
                SELECT ${columns}, ${tags},
                       coalesce((SELECT json_agg(g.id ORDER BY g.id) FROM link_group_links gl JOIN link_groups g ON g.id = gl.group_id
                                 WHERE gl.link_id = l.id AND (g.is_global OR g.user_id = l.user_id
                                   OR EXISTS (SELECT 1 FROM link_group_users gu WHERE gu.group_id = g.id AND gu.user_id = l.user_id))), '[]') AS groups
                FROM links l JOIN domains d ON d.id = l.domain_id
                WHERE ${sql.in("l.id", ids)}`
            })(ids),
            (rows) => rows.map((row) => row.toLink())
          )

    return { byId, byAlias, search, clickedByIds, forEvents, insert, domainDeleted, attachTags, countForQuota, firstOwnByUrl, lockForUpdate, aliasTaken, update } as const
  })
}) {}
