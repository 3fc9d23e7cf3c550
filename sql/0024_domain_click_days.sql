-- A domain's clicks found through its links (issue #16): the index clicks_domain_at (domain_id, at)
-- cost every click about 1.5 us of PostgreSQL CPU and 90 B of WAL, a quarter of COPY's work. Its
-- readers (report edges, window plans, the clicks export) now read the clicks of the links that
-- this table lists for the domain and UTC day, each by the primary key (link_id, at, id).
--
-- One row per domain, UTC day and link with a click of that domain that day. The click writer enters
-- a batch's rows in a statement of their own, committed before the clicks (src/Clicks/ClickRepo.ts),
-- and remembers those entered, so a link costs one row a day, not one a click. A row without clicks
-- (their batch failed) only costs a reader a probe: readers still check each click's domain_id.
CREATE TABLE domain_click_days (
  domain_id  bigint NOT NULL,
  day        date NOT NULL,
  link_id    bigint NOT NULL,
  PRIMARY KEY (domain_id, day, link_id)
);

INSERT INTO domain_click_days (domain_id, day, link_id)
SELECT DISTINCT domain_id, (at AT TIME ZONE 'UTC')::date, link_id FROM clicks ORDER BY 1, 2, 3;

DROP INDEX clicks_domain_at;
