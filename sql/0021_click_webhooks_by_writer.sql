-- Clicks for link.clicked webhooks are queued by the click writer (src/Clicks/ClickRepo.ts), in the
-- transaction that stores them, instead of by the statement trigger of sql/0014. A trigger with a
-- transition table on the partitioned clicks table made every COPY insert its rows one at a time
-- (PostgreSQL's multi-insert is off for it: a WAL record and a page lookup per row instead of per
-- page) and kept every inserted row in a tuplestore, even with no webhook wanting clicks. The writer
-- asks, per batch, which of its domains have an active webhook for link.clicked, and queues only
-- their clicks; a replay queues only the clicks it really inserted, as the trigger did.
DROP TRIGGER clicks_webhooks ON clicks;
DROP FUNCTION queue_webhook_clicks();
