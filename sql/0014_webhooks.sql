-- Signed webhooks (an extension, issue #19): subscriptions per domain, the link events and clicks
-- waiting to be turned into deliveries, and every delivery with its attempts.

-- The secret is kept encrypted (AES-256-GCM under a key derived from the token secret): it must be
-- read to sign, so it cannot be hashed. After a rotation the previous one still signs until
-- previous_until, beside the new one.
CREATE TABLE webhooks (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  domain_id        bigint NOT NULL REFERENCES domains (id),
  url              text NOT NULL,
  events           text[] NOT NULL,
  active           boolean NOT NULL DEFAULT true,
  secret           bytea NOT NULL,
  previous_secret  bytea,
  previous_until   timestamptz,
  -- When the last batch of clicks was made into a delivery: one per webhook per interval.
  clicks_batched   timestamptz NOT NULL DEFAULT '-infinity',
  created          timestamptz NOT NULL DEFAULT now(),
  modified         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_domain ON webhooks (domain_id) WHERE active;

-- The outbox of link events, written by the trigger below in the transaction of the change; the
-- dispatcher turns each into one delivery per subscribed webhook and deletes it, in one transaction.
CREATE TABLE webhook_link_events (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  link_id      bigint NOT NULL,
  event        text NOT NULL,
  occurred_at  timestamptz NOT NULL DEFAULT now()
);

-- Clicks waiting for their webhook's next batch, one row per subscribed webhook and click.
CREATE TABLE webhook_clicks (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  webhook_id  bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  click_id    uuid NOT NULL,
  link_id     bigint NOT NULL,
  at          timestamptz NOT NULL,
  country     text,
  device      text NOT NULL,
  referrer    text NOT NULL,
  qr          boolean NOT NULL,
  bot         boolean NOT NULL
);
CREATE INDEX webhook_clicks_webhook ON webhook_clicks (webhook_id, id);

-- One request's worth of an event to one webhook. `body` is the exact JSON signed and sent on every
-- attempt. Pending deliveries are due at next_attempt; an instance that takes one leases it until
-- leased_until, so another takes it only if the first died with it.
CREATE TABLE webhook_deliveries (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  webhook_id    bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event         text NOT NULL,
  body          text NOT NULL,
  created       timestamptz NOT NULL DEFAULT now(),
  state         text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  next_attempt  timestamptz,
  retry_until   timestamptz NOT NULL,
  leased_until  timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, id);
-- The log is kept for 30 days after a delivery's creation once it is settled.
CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (created) WHERE state <> 'pending';

CREATE TABLE webhook_attempts (
  delivery_id   bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  number        integer NOT NULL,
  at            timestamptz NOT NULL,
  status        integer,
  duration_ms   integer NOT NULL,
  error         text,
  next_attempt  timestamptz,
  PRIMARY KEY (delivery_id, number)
);

-- Link events, for domains with a webhook that wants them: one index probe per changed link
-- otherwise. click_count and last_clicked are not among the columns, so click batches fire nothing.
CREATE FUNCTION queue_webhook_link_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  kind text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    kind := 'link.created';
  ELSIF OLD.status = 'deleted' THEN
    RETURN NULL;
  ELSIF NEW.status = 'deleted' THEN
    kind := 'link.deleted';
  ELSIF NEW.status = 'archived' AND OLD.status <> 'archived' THEN
    kind := 'link.archived';
  ELSE
    kind := 'link.updated';
  END IF;
  IF EXISTS (SELECT 1 FROM webhooks WHERE domain_id = NEW.domain_id AND active AND kind = ANY (events)) THEN
    INSERT INTO webhook_link_events (link_id, event) VALUES (NEW.id, kind);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER links_webhooks
  AFTER INSERT OR UPDATE OF url, alias, redirect_url, notes, notify_on_click, redirect_type, status, archive_on, delete_on
  ON links FOR EACH ROW EXECUTE FUNCTION queue_webhook_link_event();

-- Clicks, for webhooks that want link.clicked: once per statement, over the rows it really inserted
-- (a replayed batch's clicks already present are not among them), so each click is queued once.
CREATE FUNCTION queue_webhook_clicks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM webhooks WHERE active AND 'link.clicked' = ANY (events)) THEN
    INSERT INTO webhook_clicks (webhook_id, click_id, link_id, at, country, device, referrer, qr, bot)
    SELECT w.id, c.id, c.link_id, c.at, c.country, c.device, c.referrer, c.qr, c.bot
    FROM new_clicks c JOIN webhooks w ON w.domain_id = c.domain_id AND w.active AND 'link.clicked' = ANY (w.events)
    ORDER BY w.id, c.at, c.id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER clicks_webhooks
  AFTER INSERT ON clicks REFERENCING NEW TABLE AS new_clicks
  FOR EACH STATEMENT EXECUTE FUNCTION queue_webhook_clicks();
