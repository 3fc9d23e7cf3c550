-- Clicks, change notifications for the redirect caches, click e-mails.

-- One row per GET redirect. The id is made by the instance before the insert, so a retried batch
-- cannot count twice. Partitions by month are created by the click writer as needed.
CREATE TABLE clicks (
  id          uuid NOT NULL,
  at          timestamptz NOT NULL,
  link_id     bigint NOT NULL,
  domain_id   bigint NOT NULL,
  ip_hash     bytea NOT NULL,
  country     text,
  region      text,
  city        text,
  device      text NOT NULL CHECK (device IN ('desktop', 'mobile', 'tablet', 'bot', 'other')),
  referrer    text NOT NULL,
  user_agent  text NOT NULL,
  qr          boolean NOT NULL,
  bot         boolean NOT NULL,
  PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);
CREATE INDEX clicks_link_at ON clicks (link_id, at);

-- Every change a redirect could see is announced on one channel: `l:<domain id>:<lower alias>` for
-- a link, `d:<domain name>` for a domain. click_count updates are not announced.
CREATE FUNCTION announce_link_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('links_changes', 'l:' || OLD.domain_id || ':' || lower(OLD.alias));
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('links_changes', 'l:' || NEW.domain_id || ':' || lower(NEW.alias));
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER links_announce
  AFTER INSERT OR DELETE OR UPDATE OF domain_id, user_id, alias, redirect_url, redirect_type, status, notify_on_click
  ON links FOR EACH ROW EXECUTE FUNCTION announce_link_change();

CREATE FUNCTION announce_domain_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('links_changes', 'd:' || OLD.domain);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('links_changes', 'd:' || NEW.domain);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER domains_announce
  AFTER INSERT OR DELETE OR UPDATE OF domain, status, has_ssl, url_404, homepage
  ON domains FOR EACH ROW EXECUTE FUNCTION announce_domain_change();

-- notify_on_click: clicks not yet reported by e-mail, and when the last e-mail went.
CREATE TABLE click_notifications (
  link_id    bigint PRIMARY KEY REFERENCES links (id),
  pending    integer NOT NULL DEFAULT 0,
  last_sent  timestamptz
);
CREATE INDEX click_notifications_pending ON click_notifications (last_sent) WHERE pending > 0;
