-- Visits of links with `max_clicks`, counted when REDIS_URL is not set: one row per limited link,
-- moved up under its row lock by the visits each instance has waiting, never past the limit
-- (src/Redirect/ClickLimits.ts). Never read per redirect from the clicks table.
CREATE TABLE link_limits (
  link_id bigint PRIMARY KEY REFERENCES links (id) ON DELETE CASCADE,
  used    bigint NOT NULL
);

-- Preview tags taken from a link's destination page when its settings are saved without `og`,
-- served to link-preview crawlers. Announced like a change of the link.
CREATE TABLE link_page_tags (
  link_id     bigint PRIMARY KEY REFERENCES links (id) ON DELETE CASCADE,
  title       text,
  description text,
  image       text,
  fetched_at  timestamptz NOT NULL DEFAULT now()
);

-- The scheduler's sweep looks for links past their settings' `expires_at` (sql/0016).
CREATE INDEX link_settings_expires_at ON link_settings (((settings->>'expires_at')::bigint)) WHERE (settings->>'expires_at') IS NOT NULL;
