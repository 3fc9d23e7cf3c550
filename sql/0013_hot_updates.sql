-- Room on each page for the next version of a row: every click batch updates the click count of
-- each link it names and the rollup rows of each link, hour and value. With pages filled to the brim
-- the new version lands on another page, and every index of the table gets an entry for it (links
-- has six); with room left, PostgreSQL keeps it on the same page as a heap-only tuple, no index is
-- touched, and the old version is pruned in place. Applies to pages written from now on.
ALTER TABLE links SET (fillfactor = 70);
ALTER TABLE click_rollups SET (fillfactor = 70);
ALTER TABLE click_rollups_hour SET (fillfactor = 70);
ALTER TABLE click_rollups_link_month SET (fillfactor = 70);
ALTER TABLE click_rollups_user SET (fillfactor = 70);
ALTER TABLE click_rollups_user_hour SET (fillfactor = 70);
ALTER TABLE click_rollups_user_month SET (fillfactor = 70);
