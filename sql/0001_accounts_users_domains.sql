-- Accounts, users, tokens and domains. Timestamps are timestamptz everywhere.

CREATE TABLE accounts (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  plan        text NOT NULL CHECK (plan IN ('free', 'team', 'business', 'enterprise')),
  link_quota  integer CHECK (link_quota IS NULL OR link_quota >= 0),
  created     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE domains (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id  bigint NOT NULL REFERENCES accounts (id),
  domain      text NOT NULL UNIQUE,
  type        text NOT NULL DEFAULT 'standard',
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  has_ssl     boolean NOT NULL DEFAULT false,
  url_404     text,
  homepage    text,
  created     timestamptz NOT NULL DEFAULT now(),
  modified    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX domains_account ON domains (account_id, id);

CREATE TABLE users (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id          bigint NOT NULL REFERENCES accounts (id),
  email               text NOT NULL,
  nickname            text NOT NULL,
  role                text NOT NULL CHECK (role IN ('account_admin', 'member')),
  password_hash       text NOT NULL,
  -- SHA-256 of the refresh token: the token itself is shown once and never stored.
  refresh_token_hash  bytea NOT NULL UNIQUE,
  default_domain_id   bigint REFERENCES domains (id),
  created             timestamptz NOT NULL DEFAULT now(),
  modified            timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email ON users (lower(email));
CREATE INDEX users_account ON users (account_id);

-- An access token is HMAC(TOKEN_SECRET, seed): the row keeps the seed (so E2 can hand the same token
-- back while it is valid) and the token's SHA-256 (to look it up); neither lets a reader of the
-- database present a token without the secret, which is not in the database.
CREATE TABLE access_tokens (
  token_hash  bytea PRIMARY KEY,
  seed        bytea NOT NULL,
  user_id     bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created     timestamptz NOT NULL DEFAULT now(),
  expires     timestamptz NOT NULL
);
CREATE INDEX access_tokens_user ON access_tokens (user_id, expires DESC);

CREATE TABLE domain_admins (
  user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  domain_id  bigint NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
  PRIMARY KEY (user_id, domain_id)
);
