-- One row naming this database for the stores it shares with other deployments: the Redis keys of
-- the click counters (src/Redirect/ClickLimits.ts). They were named by current_database(), which is
-- "postgres" in every embedded database, so two embedded deployments (or one whose database was made
-- anew) sharing a Redis counted each other's links. A new database gets a random name; one that
-- already has links keeps current_database(), so that its links' counts in Redis stay theirs.
CREATE TABLE installation (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  name     text NOT NULL
);
INSERT INTO installation (name)
SELECT CASE WHEN EXISTS (SELECT 1 FROM links) THEN current_database() ELSE gen_random_uuid()::text END;
