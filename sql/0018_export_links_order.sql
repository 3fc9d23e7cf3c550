-- The links export reads a domain's links in chunks by id (`id > last ORDER BY id LIMIT n`). No index
-- had the domain's links in id order (links_domain_user is ordered by owner first): each chunk would
-- sort every link of the domain again. Updates of click_count touch no column of it, so they stay
-- heap-only.
CREATE INDEX links_domain_id ON links (domain_id, id) WHERE status <> 'deleted';
