-- Room on each page for a whole new version of every row on it (issue #16 item 3). sql/0013 left 30 %
-- of a page free, but a click batch updates a clicked link's count and every rollup row of its hour
-- and day at once, and rows written together share pages: where all the rows of a page are updated in
-- one batch, as under steady traffic, the first 30 % of their new versions fit and the rest move to
-- other pages, each with an entry in every index of its table (links has six). In bench:clicks
-- (uniform clicks, every link in every batch) 64 % of the updates of these tables were heap-only at
-- fillfactor 70, all of them at 45: a page 45 % full takes the new version of each of its rows, and the
-- next batch prunes the old ones in place.
--
-- Applies to pages written from now on; the rows already stored stay where they are (rewriting links
-- would lock it against redirects). Only where reports do not read long ranges of rows: links (read by
-- id and alias), the hourly rollups (only the last days are kept) and the monthly totals per link (12
-- rows a year). Left at 70: the daily rollups per link and per owner, which reports read by ranges of
-- days, where a fuller page is fewer pages to read (a link's year of place rows loaded at once took 30 %
-- more pages at 45), and whose day rows could not be heap-only anyway (click_rollups_days INCLUDE);
-- the other per-owner rollups, of which a batch updates few rows per owner (all heap-only at 70).
ALTER TABLE links SET (fillfactor = 45);
ALTER TABLE click_rollups_hour SET (fillfactor = 45);
ALTER TABLE click_rollups_link_month SET (fillfactor = 45);
