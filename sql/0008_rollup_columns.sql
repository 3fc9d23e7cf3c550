-- The key columns of the click rollups (sql/0005) named for what they hold, in every kind of row:
--   value   the country of a place, the device class, the referrer host or 'direct', the hour of
--           day '00' to '23'; '' in the day rows (was a)
--   region  the region of a place, '' in the other kinds (was b)
--   city    the city of a place, '' in the other kinds (was c)
-- Unknown geography stays ''. A rename changes the catalogue only: no row is rewritten, and the
-- primary keys and indexes follow the renamed columns. The kind codes stay as they are stored; the
-- code names them in src/Clicks/Rollups.ts.
ALTER TABLE click_rollups RENAME COLUMN a TO value;
ALTER TABLE click_rollups RENAME COLUMN b TO region;
ALTER TABLE click_rollups RENAME COLUMN c TO city;

ALTER TABLE click_rollups_user RENAME COLUMN a TO value;
ALTER TABLE click_rollups_user RENAME COLUMN b TO region;
ALTER TABLE click_rollups_user RENAME COLUMN c TO city;

ALTER TABLE click_rollups_user_month RENAME COLUMN a TO value;
ALTER TABLE click_rollups_user_month RENAME COLUMN b TO region;
ALTER TABLE click_rollups_user_month RENAME COLUMN c TO city;
