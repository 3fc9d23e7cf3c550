-- Imports of links from other shorteners (`cli import`): one row per file (by its SHA-256) imported
-- into a domain from a source format. Each batch of links commits with the number of the file's rows
-- done so far, so a run stopped half way continues after the last committed batch and a finished
-- file imported again adds nothing.
CREATE TABLE import_runs (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  domain_id     bigint NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
  user_id       bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  source        text NOT NULL,
  file_sha256   text NOT NULL,
  file_name     text NOT NULL,
  rows_done     integer NOT NULL DEFAULT 0,
  imported      integer NOT NULL DEFAULT 0,
  conflicts     integer NOT NULL DEFAULT 0,
  invalid       integer NOT NULL DEFAULT 0,
  started       timestamptz NOT NULL DEFAULT now(),
  finished      timestamptz,
  UNIQUE (domain_id, source, file_sha256)
);
