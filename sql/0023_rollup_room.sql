-- Room on each page for a whole new version of every row on it (issue #16 item 3). sql/0013 left 30 %
-- of a page free, but a click batch updates every row of a clicked link's hour and day (and the link's
-- count) at once: where all the rows of a page are clicked in one batch, as under steady traffic, the
-- first 30 % of their new versions fit and the rest move to other pages, with an entry in every index
-- of the table (links has six). Measured with bench:clicks (uniform clicks, every link in every batch),
-- 64 % of the updates of links and of the rollups were heap-only at fillfactor 70, all of them at 45:
-- a page 45 % full takes the new version of each of its rows, and the next batch prunes the old ones
-- in place. Applies to pages written from now on; the rows already stored stay where they are, since
-- rewriting links would lock it against redirects. The day rows of click_rollups (partition
-- click_rollups_kind_day) keep 70: their clicks are in an index (click_rollups_days INCLUDE), so no
-- update of theirs can be heap-only.
ALTER TABLE links SET (fillfactor = 45);
ALTER TABLE click_rollups_kind_value SET (fillfactor = 45);
ALTER TABLE click_rollups_hour SET (fillfactor = 45);
ALTER TABLE click_rollups_link_month SET (fillfactor = 45);
ALTER TABLE click_rollups_user SET (fillfactor = 45);
ALTER TABLE click_rollups_user_hour SET (fillfactor = 45);
ALTER TABLE click_rollups_user_month SET (fillfactor = 45);
