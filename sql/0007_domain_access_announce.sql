-- Who administers a domain, and which account owns it, decide what the links API shows; instances
-- cache that view (src/Http/DomainAccess.ts), so these changes are announced as `auth` too, once per
-- statement. Other domain changes are already announced per row as `d:<name>` (sql/0004).
CREATE TRIGGER domain_admins_announce
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON domain_admins
  FOR EACH STATEMENT EXECUTE FUNCTION announce_auth_change();
CREATE TRIGGER domains_owner_announce
  AFTER UPDATE OF account_id OR TRUNCATE ON domains
  FOR EACH STATEMENT EXECUTE FUNCTION announce_auth_change();
