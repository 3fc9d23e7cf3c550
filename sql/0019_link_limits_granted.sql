-- How many of the visits asked for by the last statement that moved a link_limits row got a turn.
-- The counter's one UPDATE sets it from the row as it was under its lock, so the statement returns
-- which visits got a turn without first locking the row in a statement of its own
-- (src/Redirect/ClickLimits.ts).
ALTER TABLE link_limits ADD COLUMN granted bigint NOT NULL DEFAULT 0;
