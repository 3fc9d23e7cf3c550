import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { AdminError } from "../Accounts/AdminError.ts"

/** Where an import writes: the domain's account, its link quota and the owner of the new links. */
export interface ImportTarget {
  readonly domainId: number
  readonly accountId: number
  readonly linkQuota: number | null
  readonly userId: number
}

/** An import of one file into one domain, as committed so far. */
export interface ImportRun {
  readonly id: number
  readonly rows_done: number
  readonly imported: number
  readonly conflicts: number
  readonly invalid: number
  readonly started: number
  readonly finished: number | null
}

/** One link of a batch as inserted: `alias` is the source's or a generated one. */
export interface BatchLink {
  readonly alias: string
  readonly url: string
  readonly notes: string
  readonly tags: ReadonlyArray<string>
  readonly created: number | undefined
  readonly clicks: number
}

/** What a batch's commit adds to its run's counts. */
export interface BatchCounts {
  readonly rows: number
  readonly imported: number
  readonly conflicts: number
  readonly invalid: number
}

const refused = (message: string) => new AdminError({ message })

/** The SQL of `cli import`: every value a parameter, the rows of a batch as one array per column. */
export class ImportRepo extends Effect.Service<ImportRepo>()("ImportRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The active domain and the links' owner: `userId` (a user of its account), else its first account admin. */
    const target = (domainId: number, userId: number | undefined) =>
      Effect.gen(function* () {
        const [domain] = yield* sql<{ status: string; account_id: number; link_quota: number | null }>`
          SELECT d.status, d.account_id, a.link_quota FROM domains d JOIN accounts a ON a.id = d.account_id WHERE d.id = ${domainId}`
        if (domain === undefined || domain.status === "deleted") return yield* refused(`there is no domain ${domainId}`)
        if (domain.status !== "active") return yield* refused(`domain ${domainId} is ${domain.status}: links are made on active domains only`)
        const [owner] =
          userId === undefined
            ? yield* sql<{ id: number }>`
                SELECT id FROM users WHERE account_id = ${domain.account_id} AND role = 'account_admin' ORDER BY id LIMIT 1`
            : yield* sql<{ id: number }>`SELECT id FROM users WHERE id = ${userId} AND account_id = ${domain.account_id}`
        if (owner === undefined) {
          return yield* refused(
            userId === undefined
              ? `the account of domain ${domainId} has no account admin to own the links: give --user`
              : `user ${userId} is not a user of the account of domain ${domainId}`
          )
        }
        return { domainId, accountId: domain.account_id, linkQuota: domain.link_quota, userId: owner.id } satisfies ImportTarget
      })

    const runColumns = sql`id, rows_done, imported, conflicts, invalid,
      floor(extract(epoch FROM started))::int8 AS started, floor(extract(epoch FROM finished))::int8 AS finished`

    const findRun = (domainId: number, source: string, sha256: string) =>
      Effect.map(
        sql<ImportRun>`SELECT ${runColumns} FROM import_runs WHERE domain_id = ${domainId} AND source = ${source} AND file_sha256 = ${sha256}`,
        (rows) => Option.fromNullable(rows[0])
      )

    /** The run of this file, begun now unless one was begun before (by this or a concurrent import). */
    const beginRun = (target: ImportTarget, source: string, sha256: string, fileName: string) =>
      Effect.gen(function* () {
        yield* sql`
          INSERT INTO import_runs (domain_id, user_id, source, file_sha256, file_name)
          VALUES (${target.domainId}, ${target.userId}, ${source}, ${sha256}, ${fileName})
          ON CONFLICT (domain_id, source, file_sha256) DO NOTHING`
        return yield* Effect.flatMap(findRun(target.domainId, source, sha256), (run) =>
          Option.match(run, { onNone: () => Effect.dieMessage("the import run just written is missing"), onSome: Effect.succeed })
        )
      })

    const finishRun = (runId: number) => sql`UPDATE import_runs SET finished = now() WHERE id = ${runId} AND finished IS NULL`

    /** Which of these aliases (lower case) the domain's live links hold. */
    const takenAliases = (domainId: number, keys: ReadonlyArray<string>) =>
      keys.length === 0
        ? Effect.succeed(new Set<string>())
        : Effect.map(
            sql<{ key: string }>`
              SELECT lower(alias) AS key FROM links
              WHERE domain_id = ${domainId} AND status <> 'deleted' AND lower(alias) = ANY(${keys}::text[])`,
            (rows) => new Set(rows.map((row) => row.key))
          )

    /** Tag ids by lower-case name, the names created where the domain has no such tag (as E4 does). */
    const tagIds = (target: ImportTarget, names: ReadonlyArray<string>) =>
      names.length === 0
        ? Effect.succeed(new Map<string, number>())
        : Effect.map(
            sql<{ id: number; key: string }>`
              INSERT INTO tags (domain_id, user_id, name)
              SELECT ${target.domainId}, ${target.userId}, n FROM unnest(${names}::text[]) AS n ORDER BY lower(n)
              ON CONFLICT (domain_id, lower(name)) DO UPDATE SET name = tags.name
              RETURNING id, lower(name) AS key`,
            (rows) => new Map(rows.map((row) => [row.key, row.id]))
          )

    /** Inserts the links whose alias is free on the domain (ignoring case); the ids of those inserted, by lower-case alias. */
    const insertLinks = (target: ImportTarget, links: ReadonlyArray<BatchLink>) =>
      links.length === 0 ? Effect.succeed(new Map<string, number>()) : Effect.map(
        sql<{ id: number; key: string }>`
          WITH live AS (SELECT id FROM domains WHERE id = ${target.domainId} AND status = 'active' FOR SHARE)
          INSERT INTO links (domain_id, user_id, url, alias, redirect_url, notes, click_count, created)
          SELECT live.id, ${target.userId}, r.url, r.alias, r.url, r.notes, r.clicks, coalesce(to_timestamp(r.created), now())
          FROM live, unnest(
            ${links.map((link) => link.url)}::text[], ${links.map((link) => link.alias)}::text[],
            ${links.map((link) => link.notes)}::text[], ${links.map((link) => link.clicks)}::int8[],
            ${links.map((link) => link.created ?? null)}::float8[]
          ) AS r(url, alias, notes, clicks, created)
          ON CONFLICT (domain_id, lower(alias)) WHERE status <> 'deleted' DO NOTHING
          RETURNING id, lower(alias) AS key`,
        (rows) => new Map(rows.map((row) => [row.key, row.id]))
      )

    const attachTags = (pairs: ReadonlyArray<readonly [number, number]>) =>
      pairs.length === 0
        ? Effect.void
        : sql`
            INSERT INTO link_tags (link_id, tag_id)
            SELECT * FROM unnest(${pairs.map(([link]) => link)}::int8[], ${pairs.map(([, tag]) => tag)}::int8[])
            ON CONFLICT DO NOTHING`

    /** Refused when the account's quota cannot take `adding` more links; locks the account row until the transaction ends. */
    const withinQuota = (target: ImportTarget, adding: number) =>
      Effect.gen(function* () {
        const quota = target.linkQuota
        if (quota === null || adding === 0) return
        yield* sql`SELECT id FROM accounts WHERE id = ${target.accountId} FOR UPDATE`
        const [row] = yield* sql<{ n: number }>`
          SELECT count(*)::int8 AS n FROM links l JOIN domains d ON d.id = l.domain_id
          WHERE d.account_id = ${target.accountId} AND l.status <> 'deleted'`
        const count = row?.n ?? 0
        if (count + adding > quota) {
          return yield* refused(`the account's link quota (${quota}) would be passed: it has ${count} links and the next batch holds ${adding}`)
        }
      })

    /**
     * One batch's writes and its run's progress in one transaction, after checking that the run is
     * where this import left it (else a concurrent import of the same file moved it).
     */
    const commitBatch = <A, E, R>(runId: number, rowsDoneBefore: number, write: Effect.Effect<A, E, R>, counts: (result: A) => BatchCounts) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const [run] = yield* sql<{ rows_done: number; finished: boolean }>`
            SELECT rows_done, finished IS NOT NULL AS finished FROM import_runs WHERE id = ${runId} FOR UPDATE`
          if (run === undefined || run.finished || run.rows_done !== rowsDoneBefore) {
            return yield* refused("another import of the same file into this domain ran at the same time: run the import again to continue")
          }
          const result = yield* write
          const added = counts(result)
          yield* sql`
            UPDATE import_runs SET rows_done = rows_done + ${added.rows}, imported = imported + ${added.imported},
              conflicts = conflicts + ${added.conflicts}, invalid = invalid + ${added.invalid}
            WHERE id = ${runId}`
          return result
        })
      )

    return { target, findRun, beginRun, finishRun, takenAliases, tagIds, insertLinks, attachTags, withinQuota, commitBatch } as const
  })
}) {}
