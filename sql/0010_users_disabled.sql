-- A disabled user cannot log in (E1, E2) and no access token of theirs is accepted. The admin CLI's
-- `user disable` sets it and deletes the user's access tokens in one transaction; `user enable`
-- clears it.
ALTER TABLE users ADD COLUMN disabled boolean NOT NULL DEFAULT false;

-- Announced like the other changes of users that a cached token owner depends on, so that a user
-- disabled by hand in SQL is also refused at once on every instance.
DROP TRIGGER users_announce ON users;
CREATE TRIGGER users_announce
  AFTER DELETE OR UPDATE OF account_id, email, nickname, role, disabled OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION announce_auth_change();
