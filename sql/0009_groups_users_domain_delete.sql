-- A deleted domain keeps its row (its clicks stay on the account's records) under status 'deleted',
-- which frees its name: names are unique among the domains that are not deleted.
ALTER TABLE domains DROP CONSTRAINT domains_status_check;
ALTER TABLE domains ADD CONSTRAINT domains_status_check CHECK (status IN ('active', 'disabled', 'deleted'));
ALTER TABLE domains DROP CONSTRAINT domains_domain_key;
CREATE UNIQUE INDEX domains_name ON domains (domain) WHERE status <> 'deleted';

-- Optional names of a user, set from the admin CLI and listed by GET /users.
ALTER TABLE users ADD COLUMN first_name text CHECK (length(first_name) BETWEEN 1 AND 200);
ALTER TABLE users ADD COLUMN last_name text CHECK (length(last_name) BETWEEN 1 AND 200);

-- Groups: named sets of links of one domain. A global group is seen by every user of the domain's
-- account; another by its creator (user_id) and the users listed in link_group_users.
CREATE TABLE link_groups (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  domain_id  bigint NOT NULL REFERENCES domains (id),
  user_id    bigint NOT NULL REFERENCES users (id),
  name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  is_global  boolean NOT NULL DEFAULT false,
  created    timestamptz NOT NULL DEFAULT now(),
  modified   timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX link_groups_name ON link_groups (domain_id, lower(name));

CREATE TABLE link_group_users (
  group_id  bigint NOT NULL REFERENCES link_groups (id) ON DELETE CASCADE,
  user_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX link_group_users_user ON link_group_users (user_id);

CREATE TABLE link_group_links (
  group_id  bigint NOT NULL REFERENCES link_groups (id) ON DELETE CASCADE,
  link_id   bigint NOT NULL REFERENCES links (id) ON DELETE CASCADE,
  PRIMARY KEY (group_id, link_id)
);
CREATE INDEX link_group_links_link ON link_group_links (link_id);
