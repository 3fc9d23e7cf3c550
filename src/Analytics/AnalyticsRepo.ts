import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import {
  type AnalyticsWindow,
  boundaryPieces,
  DAY,
  type Edge,
  monthsOf,
  planWindow,
  type TimeRange,
  type WindowPlan
} from "./AnalyticsWindow.ts"
import { inGroup, keywordMatch, taggedWith } from "../Links/LinkRepo.ts"
import {
  clickKeyColumns,
  HOURLY_ROLLUP_DAYS,
  hourlyCode,
  hourlyKeyColumns,
  KEY_COLUMNS,
  kindIs,
  type RollupKind,
  rollupCode
} from "../Clicks/Rollups.ts"

/** The links of a domain whose clicks a report counts; unset filters match every link. */
export interface LinkFilter {
  readonly domainId: number
  /** One owner's links, or every owner's. */
  readonly userId: number | "all"
  readonly linkId?: number | undefined
  readonly tagId?: number | undefined
  /** A tag name, ignoring case (E16's `tag`). */
  readonly tagName?: string | undefined
  /** A group's links (E16's `group_id`), its visibility checked before. */
  readonly groupId?: number | undefined
  readonly keyword?: string | undefined
  readonly includeDeleted: boolean
}

/**
 * Whose clicks a report counts. `owners`: a domain's links of one owner or all, deleted ones
 * included, read from the per-owner rollups. `links`: the links matching a filter, read from the
 * per-link rollups.
 */
export type Scope =
  | { readonly _tag: "owners"; readonly domainId: number; readonly userId: number | "all" }
  | { readonly _tag: "links"; readonly filter: LinkFilter }

/** Filters on the grouped values (E18-E22, E26-E30); unset ones match everything. */
export interface ValueFilters {
  readonly country?: string | undefined
  readonly region?: string | undefined
  readonly city?: string | undefined
  readonly device?: string | undefined
  readonly referrer?: string | undefined
}

export interface Page {
  readonly limit: number
  readonly offset: number
}

/** A group's key values (null when unknown or not part of the grouping) and its clicks. */
export interface GroupRow {
  readonly value: string | null
  readonly region: string | null
  readonly city: string | null
  readonly count: number
}

/**
 * Clicks counted in a part-hour before choosing how to read it: beyond this many, "many" (a count
 * costs at most this many index entries).
 */
const COUNT_CAP = 5000

/** The first `width` key columns of the rows `s`, as SQL. */
const groupKeys = (width: 1 | 2 | 3) => KEY_COLUMNS.slice(0, width).map((column) => `s.${column}`)

/** The read side of click analytics (E16-E30, R1), over the rollups of `sql/0005_analytics.sql`. */
export class AnalyticsRepo extends Effect.Service<AnalyticsRepo>()("AnalyticsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const linkConditions = (filter: LinkFilter) =>
      sql.and([
        sql`l.domain_id = ${filter.domainId}`,
        ...(filter.includeDeleted ? [] : [sql`l.status <> 'deleted'`]),
        ...(filter.userId === "all" ? [] : [sql`l.user_id = ${filter.userId}`]),
        ...(filter.linkId === undefined ? [] : [sql`l.id = ${filter.linkId}`]),
        ...(filter.tagId === undefined
          ? []
          : [sql`EXISTS (SELECT 1 FROM link_tags lt WHERE lt.link_id = l.id AND lt.tag_id = ${filter.tagId})`]),
        ...(filter.tagName === undefined ? [] : [taggedWith(sql, filter.tagName)]),
        ...(filter.groupId === undefined ? [] : [inGroup(sql, filter.groupId)]),
        ...(filter.keyword === undefined || filter.keyword === "" ? [] : [keywordMatch(sql, filter.keyword)])
      ])

    // A day number rather than an ISO date: a window may end at 10000-01-01, which JavaScript
    // writes as "+010000-01-01" and PostgreSQL cannot read.
    const dateOf = (seconds: number) => sql`(DATE '1970-01-01' + ${Math.floor(seconds / DAY)}::int4)`

    /** `r.<column>` in the UTC dates `[from, to)` (Unix seconds at midnight). */
    const dateRange = (column: "day" | "month", from: number, to: number) =>
      sql`(${sql.unsafe(`r.${column}`)} >= ${dateOf(from)} AND ${sql.unsafe(`r.${column}`)} < ${dateOf(to)})`

    /**
     * One select per edge of the plan over the non-bot clicks `c` in its range, each given the
     * edge's sign as `sign` (an int4 expression) to count with.
     */
    const edgeRows = (edges: ReadonlyArray<Edge>, select: (sign: Fragment) => Fragment) =>
      edges.map(
        (edge) => sql`${select(sql`${edge.sign}::int4`)}
          AND NOT c.bot AND c.at >= to_timestamp(${edge.from}) AND c.at < to_timestamp(${edge.to})`
      )

    /** The same over the hourly rollups `r` of each range of `hours`. */
    const hourRows = (hours: ReadonlyArray<Edge>, select: (sign: Fragment) => Fragment) =>
      hours.map(
        (range) => sql`${select(sql`${range.sign}::int4`)}
          AND r.hour >= to_timestamp(${range.from}) AND r.hour < to_timestamp(${range.to})`
      )

    const unionAll = sql.join(" UNION ALL ", false)

    /**
     * The parts one after the other, under the column names and types of an empty first row source
     * (the parts give theirs in its order), so that no part at all is an empty result, not an error.
     */
    const rowsUnion = (parts: ReadonlyArray<Fragment>) =>
      unionAll([
        sql`SELECT NULL::int8 AS link_id, NULL::date AS day, NULL::text AS value, NULL::text AS region, NULL::text AS city,
                   0::int4 AS clicks, 0::int4 AS scans WHERE false`,
        ...parts
      ])

    /** The same with `(link_id, clicks)` rows. */
    const linkRowsUnion = (parts: ReadonlyArray<Fragment>) =>
      unionAll([sql`SELECT NULL::int8 AS link_id, 0::int4 AS clicks WHERE false`, ...parts])

    const domainOf = (scope: Scope) => (scope._tag === "owners" ? scope.domainId : scope.filter.domainId)

    /**
     * How the window is read: `planWindow`, told how many of the domain's clicks (bots too, up to
     * COUNT_CAP) lie in the recent part-hours at its bounds, so that of a part-hour and the rest of its
     * hour it reads the clicks of the one holding fewer: a burst inside the window's first minutes is
     * then taken from the hourly rollups, not read click by click.
     */
    const planFor = (domainId: number, window: AnalyticsWindow): Effect.Effect<WindowPlan, SqlError> => {
      const recent = Math.floor(window.now / DAY) * DAY - HOURLY_ROLLUP_DAYS * DAY
      const pieces = boundaryPieces(window).filter((piece) => piece.from >= recent)
      if (pieces.length === 0) return Effect.succeed(planWindow(window))
      return Effect.map(
        sql<{ piece: number; clicks: number }>`${unionAll(
          pieces.map(
            (piece, n) => sql`SELECT ${n}::int4 AS piece, count(*)::int8 AS clicks FROM (
              SELECT 1 FROM clicks c WHERE c.domain_id = ${domainId}
                AND c.at >= to_timestamp(${piece.from}) AND c.at < to_timestamp(${piece.to}) LIMIT ${COUNT_CAP}) p`
          )
        )}`,
        (rows) => {
          const key = (range: TimeRange) => `${range.from}-${range.to}`
          const counted = new Map(rows.flatMap((row) => (pieces[row.piece] === undefined ? [] : [[key(pieces[row.piece]!), row.clicks] as const])))
          return planWindow(window, HOURLY_ROLLUP_DAYS, (range) => counted.get(key(range)))
        }
      )
    }

    /**
     * Rows `(link_id, day, value, region, city, clicks, scans)` of one kind over the window: whole days
     * from the daily rollups (whole months from the monthly ones), whole hours of the edge days from the
     * hourly ones, the partial hours at the edges from the non-bot clicks themselves. Parts with nothing
     * to read are left out: an empty range of days would still scan a rollup table.
     */
    const source = (scope: Scope, kind: RollupKind, plan: WindowPlan) => {
      const code = rollupCode(kind)
      const values = sql.unsafe(clickKeyColumns(kind, "c"))
      const day = sql.unsafe("(c.at AT TIME ZONE 'UTC')::date AS day")
      const hourCode = hourlyCode(kind)
      const hourValues = sql.unsafe(hourlyKeyColumns(kind, "r"))
      const hourDay = sql.unsafe("(r.hour AT TIME ZONE 'UTC')::date AS day")
      const wholeDays = plan.firstDay < plan.endDay
      if (scope._tag === "owners") {
        const owner = scope.userId === "all" ? sql`` : sql`AND r.user_id = ${scope.userId}`
        // Day rows are grouped by day; the other kinds read whole months from the monthly rollups.
        const split = kind === "day" || !wholeDays ? undefined : monthsOf(plan)
        const dayRanges = split === undefined ? (wholeDays ? [{ from: plan.firstDay, to: plan.endDay }] : []) : split.days
        const rolled = dayRanges.map(
          (range) => sql`SELECT NULL::int8, r.day, r.value, r.region, r.city, r.clicks, r.scans FROM click_rollups_user r
            WHERE r.domain_id = ${scope.domainId} AND r.kind = ${code} AND ${dateRange("day", range.from, range.to)} ${owner}`
        )
        const monthly =
          split === undefined || split.firstMonth === split.endMonth
            ? []
            : [
                sql`SELECT NULL::int8, r.month, r.value, r.region, r.city, r.clicks, r.scans FROM click_rollups_user_month r
                  WHERE r.domain_id = ${scope.domainId} AND r.kind = ${code}
                    AND ${dateRange("month", split.firstMonth, split.endMonth)} ${owner}`
              ]
        const rawOwner = scope.userId === "all" ? sql`` : sql`AND l.user_id = ${scope.userId}`
        return rowsUnion([
          ...rolled,
          ...monthly,
          ...hourRows(
            plan.hours,
            (sign) => sql`SELECT NULL::int8, ${hourDay}, ${hourValues}, r.clicks * ${sign}, r.scans * ${sign} FROM click_rollups_user_hour r
              WHERE r.domain_id = ${scope.domainId} AND r.kind = ${hourCode} ${owner}`
          ),
          ...edgeRows(
            plan.edges,
            (sign) => sql`SELECT NULL::int8, ${day}, ${values}, ${sign}, c.qr::int4 * ${sign} FROM clicks c
              JOIN links l ON l.id = c.link_id WHERE c.domain_id = ${scope.domainId} ${rawOwner}`
          )
        ])
      }
      const chosen = sql`SELECT l.id FROM links l WHERE ${linkConditions(scope.filter)}`
      const rolled = wholeDays
        ? [
            sql`SELECT r.link_id, r.day, r.value, r.region, r.city, r.clicks, r.scans FROM click_rollups r
              WHERE r.link_id IN (${chosen}) AND r.kind = ${code} AND ${dateRange("day", plan.firstDay, plan.endDay)}`
          ]
        : []
      return rowsUnion([
        ...rolled,
        ...hourRows(
          plan.hours,
          (sign) => sql`SELECT r.link_id, ${hourDay}, ${hourValues}, r.clicks * ${sign}, r.scans * ${sign} FROM click_rollups_hour r
            WHERE r.link_id IN (${chosen}) AND r.kind = ${hourCode}`
        ),
        ...edgeRows(
          plan.edges,
          (sign) => sql`SELECT c.link_id, ${day}, ${values}, ${sign}, c.qr::int4 * ${sign} FROM clicks c
            WHERE c.domain_id = ${scope.filter.domainId} AND c.link_id IN (${chosen})`
        )
      ])
    }

    /** Clicks and QR scans per UTC day (midnight in Unix seconds) with any click. */
    const byDay = (scope: Scope, window: AnalyticsWindow) =>
      Effect.flatMap(
        planFor(domainOf(scope), window),
        (plan) => sql<{ day: number; count: number; scans: number }>`
          SELECT floor(extract(epoch FROM s.day::timestamp))::int8 AS day, sum(s.clicks)::int8 AS count, sum(s.scans)::int8 AS scans
          FROM (${source(scope, "day", plan)}) s GROUP BY s.day`
      )

    /** Clicks and QR scans per hour of the day (0-23, UTC) with any click. */
    const byHour = (scope: Scope, window: AnalyticsWindow) =>
      Effect.flatMap(
        planFor(domainOf(scope), window),
        (plan) => sql<{ hour: string; count: number; scans: number }>`
          SELECT s.value AS hour, sum(s.clicks)::int8 AS count, sum(s.scans)::int8 AS scans
          FROM (${source(scope, "hour", plan)}) s GROUP BY s.value`
      )

    const valueConditions = (filters: ValueFilters): Array<Fragment> => [
      ...(filters.country === undefined ? [] : [sql`upper(s.value) = upper(${filters.country})`]),
      ...(filters.region === undefined ? [] : [sql`lower(s.region) = lower(${filters.region})`]),
      ...(filters.city === undefined ? [] : [sql`lower(s.city) = lower(${filters.city})`]),
      ...(filters.device === undefined ? [] : [sql`s.value = ${filters.device}`]),
      ...(filters.referrer === undefined ? [] : [sql`lower(s.value) = lower(${filters.referrer})`])
    ]

    /**
     * One page of groups by the first `width` values (country; country and region; ...), most clicks
     * first, then the values ascending with unknown ones last; and the number of groups.
     */
    const grouped = (scope: Scope, kind: RollupKind, width: 1 | 2 | 3, window: AnalyticsWindow, filters: ValueFilters, page: Page) =>
      Effect.gen(function* () {
        const columns = groupKeys(width)
        const keys = sql.unsafe(columns.join(", "))
        const order = sql.unsafe(columns.map((column) => `${column} = '', ${column} COLLATE "C"`).join(", "))
        const conditions = valueConditions(filters)
        const where = conditions.length === 0 ? sql`` : sql`WHERE ${sql.and(conditions)}`
        const plan = yield* planFor(domainOf(scope), window)
        const rows = yield* sql<{ value: string; region?: string; city?: string; count: number; groups: number }>`
          SELECT ${keys}, sum(s.clicks)::int8 AS count,
                 count(*) OVER ()::int8 AS groups
          FROM (${source(scope, kind, plan)}) s ${where}
          GROUP BY ${keys}
          HAVING sum(s.clicks) > 0
          ORDER BY count DESC, ${order}
          LIMIT ${page.limit} OFFSET ${page.offset}`
        const total = rows[0]?.groups ?? (page.offset === 0 ? 0 : yield* countGroups(scope, kind, width, plan, filters))
        const known = (value: string | null | undefined) => (value === undefined || value === null || value === "" ? null : value)
        return {
          total,
          rows: rows.map((row): GroupRow => ({ value: known(row.value), region: known(row.region), city: known(row.city), count: row.count }))
        }
      })

    // Asked only for a page past the last one, where the page itself cannot say how many groups there are.
    const countGroups = (scope: Scope, kind: RollupKind, width: 1 | 2 | 3, plan: WindowPlan, filters: ValueFilters) => {
      const keys = sql.unsafe(groupKeys(width).join(", "))
      const conditions = valueConditions(filters)
      const where = conditions.length === 0 ? sql`` : sql`WHERE ${sql.and(conditions)}`
      return Effect.map(
        sql<{ n: number }>`
          SELECT count(*)::int8 AS n FROM (
            SELECT 1 FROM (${source(scope, kind, plan)}) s ${where} GROUP BY ${keys} HAVING sum(s.clicks) > 0
          ) g`,
        (rows) => rows[0]?.n ?? 0
      )
    }

    /**
     * Rows `(link_id, clicks)` of the chosen links' non-bot clicks in the window: whole months from the
     * monthly rollups, the other whole days from the daily ones, the edge days' whole hours from the
     * hourly ones, the partial hours from the clicks.
     */
    const linkClicks = (filter: LinkFilter, plan: WindowPlan) => {
      const split = monthsOf(plan)
      const chosen = sql`SELECT l.id FROM links l WHERE ${linkConditions(filter)}`
      const months =
        split.firstMonth === split.endMonth
          ? []
          : [
              sql`SELECT r.link_id, r.clicks FROM click_rollups_link_month r WHERE r.link_id IN (${chosen})
                  AND ${dateRange("month", split.firstMonth, split.endMonth)}`
            ]
      const days = split.days.filter((range) => range.from < range.to).map(
        (range) => sql`SELECT r.link_id, r.clicks FROM click_rollups r WHERE r.link_id IN (${chosen})
                       AND ${sql.unsafe(kindIs("day", "r"))}
                       AND ${dateRange("day", range.from, range.to)}`
      )
      const hours = hourRows(
        plan.hours,
        (sign) => sql`SELECT r.link_id, r.clicks * ${sign} FROM click_rollups_hour r WHERE r.link_id IN (${chosen})
                      AND ${sql.unsafe(kindIs("day", "r"))}`
      )
      const edges = edgeRows(plan.edges, (sign) => sql`SELECT c.link_id, ${sign} FROM clicks c WHERE c.link_id IN (${chosen})`)
      return linkRowsUnion([...months, ...days, ...hours, ...edges])
    }

    /** One page of the links with clicks in the window, most clicks first, then by id; and how many there are. */
    const clickedLinks = (filter: LinkFilter, window: AnalyticsWindow, page: Page) =>
      Effect.gen(function* () {
        const plan = yield* planFor(filter.domainId, window)
        const rows = yield* sql<{ link_id: number; links: number }>`
          SELECT s.link_id, count(*) OVER ()::int8 AS links
          FROM (${linkClicks(filter, plan)}) s
          GROUP BY s.link_id HAVING sum(s.clicks) > 0
          ORDER BY sum(s.clicks) DESC, s.link_id
          LIMIT ${page.limit} OFFSET ${page.offset}`
        const total = rows[0]?.links ?? (page.offset === 0 ? 0 : yield* countClickedLinks(filter, plan))
        return { total, ids: rows.map((row) => row.link_id) }
      })

    const countClickedLinks = (filter: LinkFilter, plan: WindowPlan) =>
      Effect.map(
        sql<{ n: number }>`
          SELECT count(*)::int8 AS n FROM (
            SELECT 1 FROM (${linkClicks(filter, plan)}) s GROUP BY s.link_id HAVING sum(s.clicks) > 0
          ) g`,
        (rows) => rows[0]?.n ?? 0
      )

    /** A link's lifetime non-bot clicks, QR scans and distinct client addresses. */
    const lifetime = (linkId: number) =>
      Effect.map(
        sql<{ total: number; scans: number; unique: number }>`
          SELECT coalesce(sum(clicks), 0)::int8 AS total, coalesce(sum(scans), 0)::int8 AS scans,
                 (SELECT count(*) FROM link_visitors WHERE link_id = ${linkId})::int8 AS unique
          FROM click_rollups r WHERE r.link_id = ${linkId} AND ${sql.unsafe(kindIs("day", "r"))}`,
        (rows) => rows[0] ?? { total: 0, scans: 0, unique: 0 }
      )

    /** One page of a link's clicks, bots included, newest first; and how many there are. */
    const rawClicks = (linkId: number, page: Page) =>
      Effect.all({
        total: Effect.map(
          sql<{ n: number }>`SELECT count(*)::int8 AS n FROM clicks WHERE link_id = ${linkId}`,
          (rows) => rows[0]?.n ?? 0
        ),
        rows: sql<{
          engagement_id: string
          created: number
          country: string | null
          region: string | null
          city: string | null
          device: string
          referrer: string
          user_agent: string
          qr: boolean
          bot: boolean
        }>`
          SELECT c.id::text AS engagement_id, floor(extract(epoch FROM c.at))::int8 AS created, c.country, c.region, c.city, c.device,
                 c.referrer, coalesce(u.user_agent, '') AS user_agent, c.qr, c.bot
          FROM clicks c LEFT JOIN user_agents u ON u.id = c.user_agent_id
          WHERE c.link_id = ${linkId}
          ORDER BY c.at DESC, c.id DESC
          LIMIT ${page.limit} OFFSET ${page.offset}`
      })

    /** Whether the user belongs to the account. */
    const userInAccount = (userId: number, accountId: number) =>
      Effect.map(
        sql<{ id: number }>`SELECT id FROM users WHERE id = ${userId} AND account_id = ${accountId}`,
        (rows) => rows.length > 0
      )

    /** Whether the tag is one of the domain's that the user sees (shared, or their own). */
    const tagVisible = (tagId: number, domainId: number, userId: number) =>
      Effect.map(
        sql<{ id: number }>`SELECT id FROM tags WHERE id = ${tagId} AND domain_id = ${domainId} AND (shared OR user_id = ${userId})`,
        (rows) => rows.length > 0
      )

    return {
      byDay,
      byHour,
      grouped,
      clickedLinks,
      lifetime,
      rawClicks,
      userInAccount,
      tagVisible
    } as const
  })
}) {}
