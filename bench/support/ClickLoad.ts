import type pg from "pg"
import { clickRollupRows, HOURLY_KINDS, HOURLY_ROLLUP_DAYS, kindIn, kindIs, OWNER_KINDS, OWNER_MONTH_KINDS } from "../../src/Clicks/Rollups.ts"

/**
 * Bulk loading of synthetic clicks for bench/analytics: the clicks themselves by INSERT ... SELECT
 * over generate_series, one statement per monthly partition, then everything the click writer
 * (`ClickRepo.insert`) keeps beside them, computed from the clicks with its exact semantics: the
 * daily rollups per link (`click_rollups`) and per domain and link owner (`click_rollups_user`, and
 * by month `click_rollups_user_month`), per link and month (`click_rollups_link_month`), per hour
 * (`click_rollups_hour`, `click_rollups_user_hour`, the recent days the service keeps) when the
 * schema has them,
 * `link_visitors` when the schema has it, and `links.click_count` / `links.last_clicked`. Bots are
 * counted nowhere but in `clicks`; unknown geography is '' in the rollups; days are UTC.
 *
 * The data is skewed like real traffic: link popularity is Zipf-like (rank k drawn with probability
 * about proportional to 1/k), as are countries, their regions and cities (a few hundred cities, some
 * unknown), and about 100 referrer hosts beside 'direct'. About 5% of the clicks are bots (device
 * 'bot'), about 3% QR scans; the address hash is the MD5 of a visitor number drawn from a pool, so
 * unique counts repeat as they would. Within a month the clicks are written in time order, as the
 * click writer appends them, so that the table's physical order is that of a real one.
 */

export interface LoadOptions {
  readonly clicks: number
  readonly domainId: number
  /** The links, most popular first. */
  readonly linkIds: ReadonlyArray<number>
  /** Clicks fall in `[end - days, end)`. */
  readonly end: Date
  readonly days: number
  /** Distinct client addresses to draw from. */
  readonly visitors: number
  /** More clicks in the last `seconds` before `end`: a burst of traffic inside today. */
  readonly burst?: { readonly clicks: number; readonly seconds: number } | undefined
  /** Progress lines (to stderr). */
  readonly log: (line: string) => void
}

export interface LoadTimings {
  readonly months: number
  readonly clicksMs: number
  readonly rollupsMs: number
  readonly visitorsMs: number
  readonly linksMs: number
  readonly vacuumMs: number
  /** Whether the schema has `link_visitors`. */
  readonly visitorsTable: boolean
}

const DAY_MS = 86_400_000

/** The user agent of each device class (constants: they are spelled into the loading statement). */
const AGENTS = {
  bot: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  desktop: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/126.0 Safari/537.36",
  mobile: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) Mobile/15E148",
  tablet: "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) Mobile/15E148",
  other: "okhttp/4.12.0"
} as const
const SLOTS = 100_000

// ---------------------------------------------------------------------------------------------------
// Value tables: each is expanded into SLOTS rows, a value taking as many slots as its share, so that
// a uniform slot number picks a value with the wanted distribution through one equality join.

const COUNTRIES = [
  "US", "IN", "GB", "DE", "FR", "BR", "CA", "JP", "ES", "IT", "MX", "AU", "NL", "ID", "PL", "TR", "KR", "SE", "PH", "AR",
  "CO", "ZA", "NG", "EG", "VN", "TH", "PK", "BD", "UA", "CH", "BE", "AT", "PT", "CZ", "RO", "GR", "DK", "FI", "NO", "IE",
  "IL", "SA", "AE", "SG", "MY", "NZ", "CL", "PE", "HU", "KE", "MA", "TW", "HK", "VE", "EC", "DZ", "BG", "RS", "HR", "LT"
] as const

const REFERRERS = [
  "google.com", "facebook.com", "t.co", "linkedin.com", "instagram.com", "reddit.com", "youtube.com", "bing.com",
  "l.facebook.com", "news.ycombinator.com", "duckduckgo.com", "lnkd.in", "mail.google.com", "outlook.live.com",
  "www.google.co.uk", "www.google.de", "pinterest.com", "tiktok.com", "medium.com", "github.com", "slack.com",
  "teams.microsoft.com", "web.whatsapp.com", "telegram.org", "discord.com", "yahoo.com", "baidu.com", "yandex.ru",
  "substack.com", "quora.com", "stackoverflow.com", "wikipedia.org", "twitch.tv", "x.com", "threads.net", "bsky.app"
] as const
const REFERRER_HOSTS = 100
const DIRECT_SHARE = 0.3

interface Weighted<T> {
  readonly value: T
  readonly weight: number
}

/** Values spread over SLOTS slots in proportion to their weights (largest remainders). */
const toSlots = <T>(entries: ReadonlyArray<Weighted<T>>): Array<T> => {
  const total = entries.reduce((sum, entry) => sum + entry.weight, 0)
  const shares = entries.map((entry, index) => {
    const exact = (entry.weight / total) * SLOTS
    return { index, whole: Math.floor(exact), rest: exact - Math.floor(exact) }
  })
  let left = SLOTS - shares.reduce((sum, share) => sum + share.whole, 0)
  for (const share of [...shares].sort((a, b) => b.rest - a.rest)) {
    if (left === 0) break
    share.whole += 1
    left -= 1
  }
  return shares.flatMap((share) => Array.from({ length: share.whole }, () => entries[share.index]!.value))
}

interface Place {
  readonly country: string | null
  readonly region: string | null
  readonly city: string | null
}

/** About 60 countries, 2 to 5 regions each, 1 to 4 cities per region; some cities, regions or all unknown. */
export const places = (): Array<Weighted<Place>> => {
  const entries: Array<Weighted<Place>> = [{ value: { country: null, region: null, city: null }, weight: 0.03 }]
  const countryWeights = COUNTRIES.map((_, rank) => 1 / (rank + 1) ** 1.1)
  const countryTotal = countryWeights.reduce((sum, weight) => sum + weight, 0)
  COUNTRIES.forEach((country, rank) => {
    const countryShare = (0.97 * countryWeights[rank]!) / countryTotal
    entries.push({ value: { country, region: null, city: null }, weight: countryShare * 0.01 })
    const regions = rank < 10 ? 5 : rank < 20 ? 4 : rank < 35 ? 3 : 2
    const regionTotal = Array.from({ length: regions }, (_, r) => 1 / (r + 1)).reduce((sum, weight) => sum + weight, 0)
    for (let r = 0; r < regions; r++) {
      const regionShare = (countryShare * 0.99 * (1 / (r + 1))) / regionTotal
      const region = `Region ${country}-${r + 1}`
      entries.push({ value: { country, region, city: null }, weight: regionShare * 0.1 })
      const cities = Math.max(1, 4 - r)
      const cityTotal = Array.from({ length: cities }, (_, c) => 1 / (c + 1)).reduce((sum, weight) => sum + weight, 0)
      for (let c = 0; c < cities; c++) {
        entries.push({
          value: { country, region, city: `City ${country}-${r + 1}-${c + 1}` },
          weight: (regionShare * 0.9 * (1 / (c + 1))) / cityTotal
        })
      }
    }
  })
  return entries
}

/** 'direct' for about 30% of the clicks, else one of REFERRER_HOSTS hosts, Zipf-like. */
export const referrers = (): Array<Weighted<string>> => {
  const hosts = Array.from({ length: REFERRER_HOSTS }, (_, n) => REFERRERS[n] ?? `blog${n}.example.com`)
  const weights = hosts.map((_, rank) => 1 / (rank + 1))
  const total = weights.reduce((sum, weight) => sum + weight, 0)
  return [
    { value: "direct", weight: DIRECT_SHARE },
    ...hosts.map((host, rank) => ({ value: host, weight: ((1 - DIRECT_SHARE) * weights[rank]!) / total }))
  ]
}

// ---------------------------------------------------------------------------------------------------

/** The UTC months overlapping `[from, to)`, each with its partition name, bounds and the overlap. */
export const monthsOf = (from: Date, to: Date) => {
  const months: Array<{ name: string; start: Date; end: Date; from: Date; to: Date }> = []
  let year = from.getUTCFullYear()
  let month = from.getUTCMonth()
  for (;;) {
    const start = new Date(Date.UTC(year, month, 1))
    if (start >= to) break
    const end = new Date(Date.UTC(year, month + 1, 1))
    months.push({
      name: `clicks_y${year}m${String(month + 1).padStart(2, "0")}`,
      start,
      end,
      from: start < from ? from : start,
      to: end > to ? to : end
    })
    month += 1
    if (month === 12) {
      month = 0
      year += 1
    }
  }
  return months
}

const exists = async (client: pg.Client, relation: string) =>
  (await client.query<{ found: boolean }>("SELECT to_regclass($1) IS NOT NULL AS found", [relation])).rows[0]?.found === true

const timed = async (work: () => Promise<unknown>) => {
  const started = performance.now()
  await work()
  return performance.now() - started
}

/** Runs `work` over `items` with one item at a time per client, the clients in parallel. */
const spread = async <T>(
  clients: ReadonlyArray<pg.Client>,
  items: ReadonlyArray<T>,
  work: (client: pg.Client, item: T) => Promise<void>
) => {
  let next = 0
  await Promise.all(
    clients.map(async (client) => {
      for (let index = next++; index < items.length; index = next++) await work(client, items[index]!)
    })
  )
}

/**
 * Loads the clicks and what the click writer keeps beside them, each step spread over `clients`
 * (connections to the same database; two suit two cores).
 */
export const loadClicks = async (clients: ReadonlyArray<pg.Client>, options: LoadOptions): Promise<LoadTimings> => {
  const { log } = options
  const first = clients[0]
  if (first === undefined) throw new Error("loadClicks needs a connection")
  const visitorsTable = await exists(first, "link_visitors")
  // Since sql/0012 a click refers to its user agent in the user_agents dictionary.
  const agentIds = await exists(first, "user_agents")
  if (agentIds) {
    await first.query(
      `INSERT INTO user_agents (user_agent) SELECT unnest($1::text[]) ORDER BY 1 ON CONFLICT (user_agent) DO NOTHING`,
      [Object.values(AGENTS)]
    )
  }
  const hourlyTable = await exists(first, "click_rollups_hour")
  // The days the service keeps hourly rows of (HourlyRollupPruner); older ones it would prune.
  const hourlyFrom = new Date(Math.floor(options.end.getTime() / DAY_MS) * DAY_MS - (HOURLY_ROLLUP_DAYS + 1) * DAY_MS)
  for (const client of clients) {
    // Not synchronous_commit = off: it gains nothing on a few dozen large statements, and VACUUM
    // cannot mark pages all-visible while the commits that wrote them are not yet flushed.
    await client.query("SET work_mem = '256MB'; SET maintenance_work_mem = '512MB'")
  }

  // The value tables, seen by every connection (unlogged: they are dropped at the end).
  await first.query("CREATE UNLOGGED TABLE bench_link_rank (rank int PRIMARY KEY, link_id bigint NOT NULL)")
  await first.query("INSERT INTO bench_link_rank SELECT n, id FROM unnest($1::int8[]) WITH ORDINALITY AS t(id, n)", [
    options.linkIds
  ])
  const placeSlots = toSlots(places())
  await first.query("CREATE UNLOGGED TABLE bench_place (slot int PRIMARY KEY, country text, region text, city text)")
  await first.query(
    `INSERT INTO bench_place SELECT n - 1, country, region, city
     FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS t(country, region, city, n)`,
    [placeSlots.map((p) => p.country), placeSlots.map((p) => p.region), placeSlots.map((p) => p.city)]
  )
  await first.query("CREATE UNLOGGED TABLE bench_referrer (slot int PRIMARY KEY, referrer text NOT NULL)")
  await first.query(
    "INSERT INTO bench_referrer SELECT n - 1, referrer FROM unnest($1::text[]) WITH ORDINALITY AS t(referrer, n)",
    [toSlots(referrers())]
  )
  await first.query("ANALYZE bench_link_rank, bench_place, bench_referrer")

  // Clicks: per month, a share of the total in proportion to the month's part of the window.
  const end = options.end
  const start = new Date(end.getTime() - options.days * DAY_MS)
  const months = monthsOf(start, end)
  const span = end.getTime() - start.getTime()
  let assigned = 0
  const chunks = months.map((month, index) => {
    const count =
      index === months.length - 1
        ? options.clicks - assigned
        : Math.round((options.clicks * (month.to.getTime() - month.from.getTime())) / span)
    assigned += count
    return { ...month, count }
  })
  for (const chunk of chunks) {
    await first.query(
      `CREATE TABLE IF NOT EXISTS ${chunk.name} PARTITION OF clicks
       FOR VALUES FROM ('${chunk.start.toISOString()}') TO ('${chunk.end.toISOString()}')`
    )
  }
  const lnLinks = Math.log(options.linkIds.length + 1)

  // Click n of a month falls at a random instant of the n-th of `count` equal slices of the month,
  // so the rows go into the table in time order, as the click writer appends them.
  const burst = options.burst
  const burstChunks =
    burst === undefined || burst.clicks === 0
      ? []
      : monthsOf(new Date(end.getTime() - burst.seconds * 1000), end).map((month) => ({
          ...month,
          count: Math.round((burst.clicks * (month.to.getTime() - month.from.getTime())) / (burst.seconds * 1000))
        }))
  if (burstChunks.some((chunk) => !chunks.some((month) => month.name === chunk.name))) {
    throw new Error("a burst must fall inside the window of the clicks")
  }
  const clicksMs = await timed(() =>
    spread(clients, [...chunks, ...burstChunks], async (client, chunk) => {
      const ms = await timed(() =>
        client.query(
          `INSERT INTO clicks (id, at, link_id, domain_id, ip_hash, country, region, city, device, referrer,
                               ${agentIds ? "user_agent_id" : "user_agent"}, qr, bot)
           SELECT gen_random_uuid(), s.at, l.link_id, $1, decode(md5('visitor ' || s.visitor), 'hex'),
                  p.country, p.region, p.city, d.device, r.referrer,
                  ${agentIds ? "(SELECT id FROM user_agents WHERE user_agent = " : "("}CASE d.device
                    WHEN 'bot' THEN '${AGENTS.bot}'
                    WHEN 'desktop' THEN '${AGENTS.desktop}'
                    WHEN 'mobile' THEN '${AGENTS.mobile}'
                    WHEN 'tablet' THEN '${AGENTS.tablet}'
                    ELSE '${AGENTS.other}'
                  END),
                  s.qr, s.bot
           FROM (
             -- OFFSET 0 keeps the subquery whole: each random() is drawn once per click.
             SELECT to_timestamp($2::float8 + (g.n - 1 + random()) * $3::float8 / $6::int) AS at,
                    floor(exp(random() * $4::float8))::int AS rank,
                    floor(random() * ${SLOTS})::int AS place,
                    floor(random() * ${SLOTS})::int AS referrer,
                    floor(random() * $5::float8)::int AS visitor,
                    random() < 0.03 AS qr,
                    random() < 0.05 AS bot,
                    random() AS kind
             FROM generate_series(1, $6::int) AS g(n)
             OFFSET 0
           ) s
           CROSS JOIN LATERAL (
             SELECT CASE WHEN s.bot THEN 'bot' WHEN s.kind < 0.52 THEN 'desktop' WHEN s.kind < 0.90 THEN 'mobile'
                         WHEN s.kind < 0.97 THEN 'tablet' ELSE 'other' END AS device
           ) d
           JOIN bench_link_rank l ON l.rank = s.rank
           JOIN bench_place p ON p.slot = s.place
           JOIN bench_referrer r ON r.slot = s.referrer`,
          [
            options.domainId,
            chunk.from.getTime() / 1000,
            (chunk.to.getTime() - chunk.from.getTime()) / 1000,
            lnLinks,
            options.visitors,
            chunk.count
          ]
        )
      )
      log(`  ${chunk.name}: ${chunk.count} clicks in ${(ms / 1000).toFixed(1)} s`)
    })
  )

  // Rollups, per month (a UTC day lies in one month, so the months' rows never meet): the same
  // kinds, keys and counts as the `facts` of ClickRepo.insert.
  const rollupsMs = await timed(() =>
    spread(clients, chunks, async (client, chunk) => {
      const ms = await timed(async () => {
        await client.query(
          `INSERT INTO click_rollups (link_id, kind, day, value, region, city, clicks, scans)
           SELECT f.link_id, f.kind, f.day, f.value, f.region, f.city, count(*), count(*) FILTER (WHERE f.qr)
           FROM (
             SELECT i.link_id, (i.at AT TIME ZONE 'UTC')::date AS day, i.qr, k.kind, k.value, k.region, k.city
             FROM ${chunk.name} i
             JOIN links l ON l.id = i.link_id
             CROSS JOIN LATERAL (VALUES ${clickRollupRows("i")}) AS k(kind, value, region, city)
             WHERE NOT i.bot
           ) f
           GROUP BY f.link_id, f.kind, f.day, f.value, f.region, f.city
           ORDER BY f.link_id, f.kind, f.day, f.value, f.region, f.city`
        )
        if (hourlyTable) {
          await client.query(
            `INSERT INTO click_rollups_hour (link_id, kind, hour, value, region, city, clicks, scans)
             SELECT i.link_id, k.kind, date_trunc('hour', i.at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', k.value, k.region, k.city,
                    count(*), count(*) FILTER (WHERE i.qr)
             FROM ${chunk.name} i
             JOIN links l ON l.id = i.link_id
             CROSS JOIN LATERAL (VALUES ${clickRollupRows("i")}) AS k(kind, value, region, city)
             WHERE NOT i.bot AND ${kindIn(HOURLY_KINDS, "k")} AND i.at >= $1
             GROUP BY 1, 2, 3, 4, 5, 6
             ORDER BY 1, 2, 3, 4, 5, 6`,
            [hourlyFrom.toISOString()]
          )
          await client.query(
            `INSERT INTO click_rollups_user_hour (domain_id, user_id, kind, hour, value, region, city, clicks, scans)
             SELECT l.domain_id, l.user_id, r.kind, r.hour, r.value, r.region, r.city, sum(r.clicks), sum(r.scans)
             FROM click_rollups_hour r JOIN links l ON l.id = r.link_id
             WHERE r.hour >= $1 AND r.hour < $2
             GROUP BY 1, 2, 3, 4, 5, 6, 7`,
            [chunk.start.toISOString(), chunk.end.toISOString()]
          )
        }
        // Per owner: the per-link rows of the month summed over the domain's links of each owner.
        await client.query(
          `INSERT INTO click_rollups_user (domain_id, user_id, kind, day, value, region, city, clicks, scans)
           SELECT l.domain_id, l.user_id, r.kind, r.day, r.value, r.region, r.city, sum(r.clicks), sum(r.scans)
           FROM click_rollups r JOIN links l ON l.id = r.link_id
           WHERE r.day >= $1::date AND r.day < $2::date AND ${kindIn(OWNER_KINDS, "r")}
           GROUP BY l.domain_id, r.kind, r.day, l.user_id, r.value, r.region, r.city
           ORDER BY l.domain_id, r.kind, r.day, l.user_id, r.value, r.region, r.city`,
          [chunk.start.toISOString().slice(0, 10), chunk.end.toISOString().slice(0, 10)]
        )
        // And per owner and month: a chunk is one calendar month, so each key is written once.
        await client.query(
          `INSERT INTO click_rollups_user_month (domain_id, user_id, kind, month, value, region, city, clicks, scans)
           SELECT domain_id, user_id, kind, date_trunc('month', day)::date, value, region, city, sum(clicks), sum(scans)
           FROM click_rollups_user r
           WHERE day >= $1::date AND day < $2::date AND ${kindIn(OWNER_MONTH_KINDS, "r")}
           GROUP BY domain_id, kind, date_trunc('month', day), user_id, value, region, city`,
          [chunk.start.toISOString().slice(0, 10), chunk.end.toISOString().slice(0, 10)]
        )
        await client.query(
          `INSERT INTO click_rollups_link_month (link_id, month, clicks, scans)
           SELECT link_id, date_trunc('month', day)::date, sum(clicks), sum(scans)
           FROM click_rollups r
           WHERE day >= $1::date AND day < $2::date AND ${kindIs("day", "r")}
           GROUP BY link_id, date_trunc('month', day)`,
          [chunk.start.toISOString().slice(0, 10), chunk.end.toISOString().slice(0, 10)]
        )
      })
      log(`  rollups of ${chunk.name} in ${(ms / 1000).toFixed(1)} s`)
    })
  )

  // The distinct address hashes per link, over all months: one share of the links per connection.
  const shares = clients.map((_, share) => share)
  const visitorsMs = visitorsTable
    ? await timed(() =>
        spread(clients, shares, async (client, share) => {
          await client.query(
            `INSERT INTO link_visitors (link_id, ip_hash)
             SELECT DISTINCT c.link_id, c.ip_hash FROM clicks c JOIN links l ON l.id = c.link_id
             WHERE NOT c.bot AND c.link_id % $1 = $2 ORDER BY c.link_id, c.ip_hash`,
            [clients.length, share]
          )
        })
      )
    : 0
  if (visitorsTable) log(`  link_visitors in ${(visitorsMs / 1000).toFixed(1)} s`)

  const linksMs = await timed(() =>
    first.query(
      `UPDATE links
       SET click_count = links.click_count + t.clicks, last_clicked = greatest(links.last_clicked, t.last)
       FROM (
         SELECT r.link_id, sum(r.clicks)::int8 AS clicks,
                (SELECT max(c.at) FROM clicks c WHERE c.link_id = r.link_id AND NOT c.bot) AS last
         FROM click_rollups r WHERE ${kindIs("day", "r")} GROUP BY r.link_id
       ) t
       WHERE links.id = t.link_id`
    )
  )
  log(`  links.click_count and last_clicked in ${(linksMs / 1000).toFixed(1)} s`)

  // VACUUM too, not only ANALYZE: a table that has lived has its visibility map set, which index-only
  // scans rely on. The clicks' partitions are shared out; ANALYZE of the parent analyses them too.
  const vacuumed = [
    ...chunks.map((chunk) => `VACUUM ${chunk.name}`),
    "ANALYZE clicks",
    "VACUUM (ANALYZE) click_rollups",
    "VACUUM (ANALYZE) click_rollups_user",
    "VACUUM (ANALYZE) click_rollups_user_month",
    "VACUUM (ANALYZE) click_rollups_link_month",
    ...(hourlyTable ? ["VACUUM (ANALYZE) click_rollups_hour", "VACUUM (ANALYZE) click_rollups_user_hour"] : []),
    "VACUUM (ANALYZE) links",
    ...(visitorsTable ? ["VACUUM (ANALYZE) link_visitors"] : [])
  ]
  const vacuumMs = await timed(() => spread(clients, vacuumed, async (client, statement) => void (await client.query(statement))))
  log(`  VACUUM (ANALYZE) in ${(vacuumMs / 1000).toFixed(1)} s`)
  await first.query("DROP TABLE bench_link_rank, bench_place, bench_referrer")
  for (const client of clients) await client.query("RESET work_mem; RESET maintenance_work_mem")
  return { months: chunks.length, clicksMs, rollupsMs, visitorsMs, linksMs, vacuumMs, visitorsTable }
}
