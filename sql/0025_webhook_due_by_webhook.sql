-- The dispatcher takes due deliveries account by account in turns (src/Webhooks/DeliveryRepo.ts,
-- claimDue): each active webhook's oldest due ones, found without reading its settled log or
-- another webhook's backlog. Keyed by time alone, the index led the planner to read one account's
-- whole backlog for each other webhook (0.8 s a poll over a backlog of 50,000, against 1 ms).
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (webhook_id, next_attempt) WHERE state = 'pending';
