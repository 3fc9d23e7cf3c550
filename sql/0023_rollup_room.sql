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
-- would lock it against redirects). Left at 70: the day rows of click_rollups (click_rollups_kind_day),
-- whose clicks are in an index (click_rollups_days INCLUDE), so that no update of theirs is heap-only;
-- and the per-owner rollups, which a batch updates a few rows of per owner (all heap-only at 70) and
-- which domain reports read by ranges of days, where a fuller page is fewer pages to read.
ALTER TABLE links SET (fillfactor = 45);
ALTER TABLE click_rollups_kind_value SET (fillfactor = 45);
ALTER TABLE click_rollups_hour SET (fillfactor = 45);
ALTER TABLE click_rollups_link_month SET (fillfactor = 45);
