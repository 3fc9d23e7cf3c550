-- Cheaper click batches (issue #16 item 3).

-- Clicks for link.clicked webhooks are queued by the click writer (src/Clicks/ClickRepo.ts), in the
-- transaction that stores them, instead of by the statement trigger of sql/0014. A trigger with a
-- transition table on the partitioned clicks table made every COPY insert its rows one at a time
-- (PostgreSQL's multi-insert is off for it: a WAL record and a page lookup per row instead of per
-- page) and kept every inserted row in a tuplestore, even with no webhook wanting clicks. The writer
-- asks, per batch, which of its domains have an active webhook for link.clicked, and queues only
-- their clicks; a replay queues only the clicks it really inserted, as the trigger did.
DROP TRIGGER clicks_webhooks ON clicks;
DROP FUNCTION queue_webhook_clicks();

-- The daily rollups per link split by kind: the day rows ('d') apart from the others. The index that
-- lets clicked links (E16) and lifetime totals read the day rows without the table holds clicks and
-- scans (INCLUDE), and PostgreSQL updates a row in place (a heap-only tuple, no index entry; sql/0013)
-- only when no index of its table holds a changed column: on one table, none of the rollup rows a
-- batch adds to could be. Now only the day rows are, a fifth of them. The same key, the same rows:
-- readers name click_rollups and read the partition of their kind.
ALTER TABLE click_rollups RENAME TO click_rollups_0021;
ALTER INDEX click_rollups_pkey RENAME TO click_rollups_0021_pkey;
ALTER INDEX click_rollups_days RENAME TO click_rollups_0021_days;
CREATE TABLE click_rollups (
  link_id  bigint NOT NULL,
  kind     "char" NOT NULL CHECK (kind IN ('d', 'g', 'v', 'r', 'h')),
  day      date NOT NULL,
  value    text NOT NULL,
  region   text NOT NULL,
  city     text NOT NULL,
  clicks   integer NOT NULL,
  scans    integer NOT NULL,
  PRIMARY KEY (link_id, kind, day, value, region, city)
) PARTITION BY LIST (kind);
CREATE TABLE click_rollups_kind_day PARTITION OF click_rollups FOR VALUES IN ('d') WITH (fillfactor = 70);
CREATE TABLE click_rollups_kind_value PARTITION OF click_rollups FOR VALUES IN ('g', 'v', 'r', 'h') WITH (fillfactor = 70);
CREATE INDEX click_rollups_days ON click_rollups_kind_day (link_id, day) INCLUDE (clicks, scans);
INSERT INTO click_rollups SELECT * FROM click_rollups_0021 ORDER BY link_id, kind, day, value, region, city;
DROP TABLE click_rollups_0021;
