import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"

/** The time key of `clicks_domain_minute` (sql/0024) for clicks aliased `c`: the click's UTC minute. */
export const CLICK_MINUTE = "date_trunc('minute', c.at AT TIME ZONE 'UTC')"

/**
 * The minutes holding `c.at >= from AND c.at < to`, for a reader that has those conditions too:
 * adding this lets PostgreSQL find a domain's clicks in the range by `clicks_domain_minute`, and
 * changes no answer.
 */
export const minutesOf = (sql: SqlClient.SqlClient, from: Fragment, to: Fragment): Fragment => {
  const minute = sql.unsafe(CLICK_MINUTE)
  return sql`${minute} >= date_trunc('minute', ${from} AT TIME ZONE 'UTC') AND ${minute} < ${to} AT TIME ZONE 'UTC'`
}
