-- Changes to access tokens, users and accounts are announced as `auth` on the change channel, once
-- per statement, so that instances which cache the owner of a token forget what they cached.
-- New tokens are not announced: nothing about them can be cached before they exist.
CREATE FUNCTION announce_auth_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('links_changes', 'auth');
  RETURN NULL;
END $$;
CREATE TRIGGER access_tokens_announce
  AFTER DELETE OR UPDATE OR TRUNCATE ON access_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION announce_auth_change();
CREATE TRIGGER users_announce
  AFTER DELETE OR UPDATE OF account_id, email, nickname, role OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION announce_auth_change();
CREATE TRIGGER accounts_announce
  AFTER DELETE OR UPDATE OR TRUNCATE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION announce_auth_change();
