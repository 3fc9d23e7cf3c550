-- Non-bot clicks per UTC hour (hour = its first instant), by the kinds of the daily rollups except
-- the hour of day, which the hour itself is: 'd' (the hour's clicks), 'g' (place), 'v' (device),
-- 'r' (referrer), with the same key columns. A report window that cuts a day reads that day's whole
-- hours here, and from the clicks themselves only the part of an hour at each edge: a day with
-- 150,000 clicks is no longer read click by click. Only recent days are kept (HourlyRollupPruner).

-- Per link, as click_rollups: reports over chosen links (one link, a tag, a keyword).
CREATE TABLE click_rollups_hour (
  link_id  bigint NOT NULL,
  kind     "char" NOT NULL CHECK (kind IN ('d', 'g', 'v', 'r')),
  hour     timestamptz NOT NULL,
  value    text NOT NULL,
  region   text NOT NULL,
  city     text NOT NULL,
  clicks   integer NOT NULL,
  scans    integer NOT NULL,
  PRIMARY KEY (link_id, kind, hour, value, region, city)
);

-- Per domain and link owner, as click_rollups_user: domain reports without link filters, where an
-- hour of many links' clicks sums to a few rows per value.
CREATE TABLE click_rollups_user_hour (
  domain_id  bigint NOT NULL,
  user_id    bigint NOT NULL,
  kind       "char" NOT NULL CHECK (kind IN ('d', 'g', 'v', 'r')),
  hour       timestamptz NOT NULL,
  value      text NOT NULL,
  region     text NOT NULL,
  city       text NOT NULL,
  clicks     integer NOT NULL,
  scans      integer NOT NULL,
  PRIMARY KEY (domain_id, kind, hour, user_id, value, region, city)
);

-- The clicks written before these tables existed, counted as the click writer counts them: those of
-- the days reports read hourly rows for (src/Clicks/Rollups.ts, HOURLY_ROLLUP_DAYS); older hours
-- would only be pruned.
INSERT INTO click_rollups_hour (link_id, kind, hour, value, region, city, clicks, scans)
SELECT c.link_id, k.kind, date_trunc('hour', c.at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', k.value, k.region, k.city,
       count(*), count(*) FILTER (WHERE c.qr)
FROM clicks c
JOIN links l ON l.id = c.link_id
CROSS JOIN LATERAL (VALUES
  ('d'::"char", ''::text, ''::text, ''::text),
  ('g'::"char", coalesce(c.country, ''), coalesce(c.region, ''), coalesce(c.city, '')),
  ('v'::"char", c.device, '', ''),
  ('r'::"char", c.referrer, '', '')
) AS k(kind, value, region, city)
WHERE NOT c.bot AND c.at >= now() - interval '9 days'
GROUP BY 1, 2, 3, 4, 5, 6;

INSERT INTO click_rollups_user_hour (domain_id, user_id, kind, hour, value, region, city, clicks, scans)
SELECT l.domain_id, l.user_id, r.kind, r.hour, r.value, r.region, r.city, sum(r.clicks), sum(r.scans)
FROM click_rollups_hour r
JOIN links l ON l.id = r.link_id
GROUP BY 1, 2, 3, 4, 5, 6, 7;
