-- Click analytics (E16-E30): daily rollups kept up to date by the statement that
-- writes each click batch, so reports read a few rows per day instead of every click.

ALTER TABLE links ADD COLUMN last_clicked timestamptz;

-- Partial days at the edges of a domain report's window are read from the clicks themselves.
CREATE INDEX clicks_domain_at ON clicks (domain_id, at);

-- Non-bot clicks per link and UTC day, one row per grouping and value:
--   kind 'd': the day itself (a = b = c = '')
--   kind 'g': geography, a = country, b = region, c = city ('' when unknown)
--   kind 'v': device, a = device class
--   kind 'r': referrer, a = referrer host or 'direct'
--   kind 'h': hour of day, a = '00' to '23' (per link only)
-- scans counts the clicks that came from the QR code.
CREATE TABLE click_rollups (
  link_id  bigint NOT NULL,
  kind     "char" NOT NULL CHECK (kind IN ('d', 'g', 'v', 'r', 'h')),
  day      date NOT NULL,
  a        text NOT NULL,
  b        text NOT NULL,
  c        text NOT NULL,
  clicks   integer NOT NULL,
  scans    integer NOT NULL,
  PRIMARY KEY (link_id, kind, day, a, b, c)
);

-- Clicked links (E16) and daily reports read only the day rows of many links at once.
CREATE INDEX click_rollups_days ON click_rollups (link_id, day) INCLUDE (clicks, scans) WHERE kind = 'd';

-- The same summed per domain and link owner: domain reports without link filters read these.
CREATE TABLE click_rollups_user (
  domain_id  bigint NOT NULL,
  user_id    bigint NOT NULL,
  kind       "char" NOT NULL CHECK (kind IN ('d', 'g', 'v', 'r')),
  day        date NOT NULL,
  a          text NOT NULL,
  b          text NOT NULL,
  c          text NOT NULL,
  clicks     integer NOT NULL,
  scans      integer NOT NULL,
  PRIMARY KEY (domain_id, kind, day, user_id, a, b, c)
);

-- The per-owner rows again by UTC month (month = its first day), without the day grouping: a
-- report over a year reads 12 rows per value instead of 365.
CREATE TABLE click_rollups_user_month (
  domain_id  bigint NOT NULL,
  user_id    bigint NOT NULL,
  kind       "char" NOT NULL CHECK (kind IN ('g', 'v', 'r')),
  month      date NOT NULL,
  a          text NOT NULL,
  b          text NOT NULL,
  c          text NOT NULL,
  clicks     integer NOT NULL,
  scans      integer NOT NULL,
  PRIMARY KEY (domain_id, kind, month, user_id, a, b, c)
);

-- Non-bot clicks per link and UTC month (month = its first day): clicked links (E16) over a year
-- read 12 rows per link instead of 365.
CREATE TABLE click_rollups_link_month (
  link_id  bigint NOT NULL,
  month    date NOT NULL,
  clicks   integer NOT NULL,
  scans    integer NOT NULL,
  PRIMARY KEY (link_id, month)
);

-- The distinct client address hashes of each link's non-bot clicks: its lifetime unique count.
CREATE TABLE link_visitors (
  link_id  bigint NOT NULL,
  ip_hash  bytea NOT NULL,
  PRIMARY KEY (link_id, ip_hash)
);
