-- Blocks of a click-limited link's visits leased by an instance while the link is far from its
-- limit (src/Redirect/ClickLimits.ts): `leased` on link_limits is the sum of its leases' slots, so
-- `used + leased` never passes the limit; `lent` is how many slots the last statement that moved
-- the row added to `leased` (as `granted` is for visits). A lease past `expires_at` (its instance
-- stopped renewing it: it crashed) is taken back by the next statement of any instance that counts
-- the link.
ALTER TABLE link_limits ADD COLUMN leased bigint NOT NULL DEFAULT 0, ADD COLUMN lent bigint NOT NULL DEFAULT 0;

CREATE TABLE link_limit_leases (
  link_id    bigint NOT NULL REFERENCES link_limits (link_id) ON DELETE CASCADE,
  instance   uuid NOT NULL,
  slots      bigint NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (link_id, instance)
);
