import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { TimeRange } from "../Analytics/AnalyticsWindow.ts"
import { DestinationRow, StoredSettings, type Target } from "./SettingsModel.ts"

/** A link's stored settings: the document and whether a password hash is kept. */
export class SettingsRow extends Schema.Class<SettingsRow>("SettingsRow")({
  settings: StoredSettings,
  password_set: Schema.Boolean
}) {}

/** What replaces a link's settings: the document, its served destinations (in `destinationsOf` order), the password's hash. */
export interface SettingsWrite {
  readonly linkId: number
  readonly settings: StoredSettings
  readonly targets: ReadonlyArray<Target>
  readonly passwordHash: string | null
}

/** What replacing a link's settings needs of the link: its domain, account and UTM fields. */
export class SettingsLinkRow extends Schema.Class<SettingsLinkRow>("SettingsLinkRow")({
  domain_id: Schema.Int,
  account_id: Schema.Int,
  template_id: Schema.NullOr(Schema.Int),
  utm_fields: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String }))
}) {}

const toIso = (seconds: number) => new Date(seconds * 1000).toISOString()

export class SettingsRepo extends Effect.Service<SettingsRepo>()("SettingsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const find = SqlSchema.findOne({
      Request: Schema.Int,
      Result: SettingsRow,
      execute: (linkId) => sql`
        SELECT settings, password_hash IS NOT NULL AS password_set FROM link_settings WHERE link_id = ${linkId}`
    })

    /** The link, unless it is deleted; locked until the transaction ends with `lock`. */
    const linkRow = (lock: boolean) =>
      SqlSchema.findOne({
        Request: Schema.Int,
        Result: SettingsLinkRow,
        execute: (linkId) => sql`
          SELECT l.domain_id, d.account_id, l.template_id, l.utm_fields
          FROM links l JOIN domains d ON d.id = l.domain_id
          WHERE l.id = ${linkId} AND l.status <> 'deleted'
          ${sql.literal(lock ? "FOR UPDATE OF l" : "")}`
      })
    const linkOf = linkRow(false)
    const lockLink = linkRow(true)

    /**
     * The dictionary ids of served destination URLs, entering those not there yet (in text order, so
     * that two writers entering the same URLs cannot deadlock), in the order given.
     */
    const targetsOf = (urls: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        if (urls.length === 0) return []
        const distinct = [...new Set(urls)].sort()
        yield* sql`
          INSERT INTO destinations (url) SELECT u FROM unnest(${distinct}::text[]) u ORDER BY 1
          ON CONFLICT (url) DO NOTHING`
        const rows = yield* sql<{ id: number; url: string }>`SELECT id, url FROM destinations WHERE url = ANY(${distinct}::text[])`
        const ids = new Map(rows.map((row) => [row.url, row.id]))
        const targets: Array<Target> = []
        for (const url of urls) {
          const id = ids.get(url)
          if (id === undefined) return yield* Effect.dieMessage("a destination missing from the dictionary")
          targets.push({ id, url })
        }
        return targets
      })

    /** Replaces the link's settings; none at all removes its row, so its redirects read nothing more. */
    const replace = (write: SettingsWrite) =>
      Object.keys(write.settings).length === 0 && write.passwordHash === null
        ? sql`DELETE FROM link_settings WHERE link_id = ${write.linkId}`.pipe(Effect.asVoid)
        : sql`
            INSERT INTO link_settings (link_id, settings, targets, password_hash, modified)
            VALUES (${write.linkId}, ${JSON.stringify(write.settings)}::jsonb, ${JSON.stringify(write.targets)}::jsonb,
                    ${write.passwordHash}, now())
            ON CONFLICT (link_id) DO UPDATE
            SET settings = excluded.settings, targets = excluded.targets, password_hash = excluded.password_hash, modified = now()`.pipe(
            Effect.asVoid
          )

    /**
     * Non-bot clicks of the link in the window per destination served, most first (then by URL);
     * clicks sent to the link's own URL count under its redirect URL now.
     */
    const destinations = (linkId: number, window: TimeRange) =>
      Effect.flatMap(
        sql`
          SELECT coalesce(d.url, l.redirect_url) AS url, count(*)::int4 AS count, count(DISTINCT c.ip_hash)::int4 AS "unique"
          FROM clicks c
          JOIN links l ON l.id = c.link_id
          LEFT JOIN destinations d ON d.id = c.destination_id
          WHERE c.link_id = ${linkId} AND c.at >= ${toIso(window.from)} AND c.at < ${toIso(window.to)} AND NOT c.bot
          GROUP BY 1
          ORDER BY 2 DESC, 1`,
        Schema.decodeUnknown(Schema.Array(DestinationRow))
      )

    return { find, linkOf, lockLink, targetsOf, replace, destinations } as const
  })
}) {}
