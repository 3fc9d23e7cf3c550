-- Smart-link settings (issue #24): targeting rules, A/B splits, password, click limit, expiry, previews.

-- Served destination URLs (a rule's or split's URL with the link's UTM fields), once each: a click
-- records the destination it was sent to by this 4-byte id (null: the link's own URL).
CREATE TABLE destinations (
  id   integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  url  text NOT NULL UNIQUE
);

-- One row per link with settings; a link without any has none, and its redirects read nothing more.
-- `settings` is the document GET answers (without the password); `targets` the served destinations
-- as [{id, url}] in the order of `destinationsOf` (src/SmartLinks/SettingsModel.ts); the password
-- only as an argon2id hash.
CREATE TABLE link_settings (
  link_id        bigint PRIMARY KEY REFERENCES links (id) ON DELETE CASCADE,
  settings       jsonb NOT NULL,
  targets        jsonb NOT NULL,
  password_hash  text,
  modified       timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE clicks ADD COLUMN destination_id integer;

-- A change of settings is a change of the link for every instance's redirect cache: announced as
-- the link's `l:<domain id>:<lower alias>` (sql/0004).
CREATE FUNCTION announce_link_settings_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('links_changes', 'l:' || l.domain_id || ':' || lower(l.alias))
  FROM links l WHERE l.id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.link_id ELSE NEW.link_id END);
  RETURN NULL;
END $$;
CREATE TRIGGER link_settings_announce
  AFTER INSERT OR DELETE OR UPDATE ON link_settings
  FOR EACH ROW EXECUTE FUNCTION announce_link_settings_change();
