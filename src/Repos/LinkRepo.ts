import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Link, LinkStatus, LinkTag } from "../Domain/Link.ts"

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
  tags: Schema.Array(LinkTag)
}) {
  toLink(): Link {
    const { domain, has_ssl, notify_on_click, ...rest } = this
    return new Link({
      ...rest,
      short_link: `${has_ssl ? "https" : "http"}://${domain}/${this.alias}`,
      notify_on_click: notify_on_click ? "1" : "0"
    })
  }
}

/** Who asks: links of others are visible only to those who administer the domain (CONTRACT §4). */
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

export class LinkRepo extends Effect.Service<LinkRepo>()("LinkRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const epoch = (column: string) => sql.unsafe(`floor(extract(epoch FROM l.${column}))::int8 AS ${column}`)
    const select = sql`
      SELECT l.id, l.domain_id, l.user_id, l.url, l.alias, l.redirect_url, l.notes, l.notify_on_click,
             l.redirect_type, l.status, l.template_id, l.click_count,
             ${epoch("archive_on")}, ${epoch("delete_on")}, ${epoch("created")}, ${epoch("modified")},
             d.domain, d.has_ssl,
             coalesce((SELECT json_agg(json_build_object('name', t.name, 'shared', t.shared) ORDER BY lower(t.name))
                       FROM link_tags lt JOIN tags t ON t.id = lt.tag_id WHERE lt.link_id = l.id), '[]') AS tags
      FROM links l JOIN domains d ON d.id = l.domain_id`

    const visibleTo = (viewer: Viewer) =>
      sql`l.status <> 'deleted' AND d.account_id = ${viewer.accountId}
          AND (${viewer.seesAll} OR l.user_id = ${viewer.userId})`

    const findById = SqlSchema.findOne({
      Request: Schema.Struct({ domainId: Schema.Int, linkId: Schema.Int, viewer: Viewer }),
      Result: LinkRow,
      execute: ({ domainId, linkId, viewer }) =>
        sql`${select} WHERE l.id = ${linkId} AND l.domain_id = ${domainId} AND ${visibleTo(viewer)}`
    })

    const findByAlias = SqlSchema.findOne({
      Request: Schema.Struct({ domainId: Schema.Int, alias: Schema.String, viewer: Viewer }),
      Result: LinkRow,
      execute: ({ domainId, alias, viewer }) =>
        sql`${select} WHERE l.domain_id = ${domainId} AND lower(l.alias) = lower(${alias}) AND ${visibleTo(viewer)}`
    })

    const toLink = Option.map((row: LinkRow) => row.toLink())

    const byId = (domainId: number, linkId: number, viewer: Viewer) =>
      Effect.map(findById({ domainId, linkId, viewer }), toLink)

    const byAlias = (domainId: number, alias: string, viewer: Viewer) =>
      Effect.map(findByAlias({ domainId, alias, viewer }), toLink)

    /** The new link's id, or none when its alias is taken on the domain (ignoring case). */
    const insert = (input: NewLink) =>
      Effect.map(
        sql<{ id: number }>`
          INSERT INTO links (domain_id, user_id, url, alias, redirect_url, notes, notify_on_click, redirect_type,
                             template_id, utm_fields, archive_on, delete_on)
          VALUES (${input.domainId}, ${input.userId}, ${input.url}, ${input.alias}, ${input.redirectUrl},
                  ${input.notes}, ${input.notifyOnClick}, ${input.redirectType}, ${input.templateId},
                  ${input.utmFields === null ? null : JSON.stringify(input.utmFields)}::jsonb,
                  to_timestamp(${input.archiveOn}), to_timestamp(${input.deleteOn}))
          ON CONFLICT (domain_id, lower(alias)) WHERE status <> 'deleted' DO NOTHING
          RETURNING id`,
        (rows) => Option.fromNullable(rows[0]?.id)
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

    return { byId, byAlias, insert, attachTags, countForQuota, firstOwnByUrl } as const
  })
}) {}
