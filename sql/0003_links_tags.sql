-- Links and tags.

CREATE TABLE links (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  domain_id        bigint NOT NULL REFERENCES domains (id),
  user_id          bigint NOT NULL REFERENCES users (id),
  url              text NOT NULL,
  alias            text NOT NULL,
  redirect_url     text NOT NULL,
  notes            text NOT NULL DEFAULT '',
  notify_on_click  boolean NOT NULL DEFAULT false,
  redirect_type    smallint NOT NULL DEFAULT 301 CHECK (redirect_type IN (301, 307)),
  status           text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived', 'deleted')),
  template_id      bigint REFERENCES utm_templates (id),
  utm_fields       jsonb,
  archive_on       timestamptz,
  delete_on        timestamptz,
  click_count      bigint NOT NULL DEFAULT 0,
  created          timestamptz NOT NULL DEFAULT now(),
  modified         timestamptz NOT NULL DEFAULT now(),
  CHECK (archive_on IS NULL OR delete_on IS NULL)
);
-- Aliases are unique per domain ignoring case; a deleted link frees its alias.
CREATE UNIQUE INDEX links_alias ON links (domain_id, lower(alias)) WHERE status <> 'deleted';
CREATE INDEX links_domain_user ON links (domain_id, user_id, id) WHERE status <> 'deleted';
CREATE INDEX links_domain_url ON links (domain_id, url) WHERE status <> 'deleted';
-- The scheduler's work lists: active links with an archive or delete date, archived ones with a
-- delete date.
CREATE INDEX links_due ON links ((coalesce(archive_on, delete_on)))
  WHERE status = 'active' AND (archive_on IS NOT NULL OR delete_on IS NOT NULL);
CREATE INDEX links_due_archived ON links (delete_on) WHERE status = 'archived' AND delete_on IS NOT NULL;

CREATE TABLE tags (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  domain_id  bigint NOT NULL REFERENCES domains (id),
  user_id    bigint NOT NULL REFERENCES users (id),
  name       text NOT NULL,
  shared     boolean NOT NULL DEFAULT false,
  notes      text NOT NULL DEFAULT '',
  created    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tags_name ON tags (domain_id, lower(name));

CREATE TABLE link_tags (
  link_id  bigint NOT NULL REFERENCES links (id) ON DELETE CASCADE,
  tag_id   bigint NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
  PRIMARY KEY (link_id, tag_id)
);
CREATE INDEX link_tags_tag ON link_tags (tag_id);
