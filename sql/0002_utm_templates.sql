-- UTM templates (spec "UTM template", E15): the fields are appended to a link's redirect URL.

CREATE TABLE utm_templates (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id  bigint NOT NULL REFERENCES accounts (id),
  domain_id   bigint NOT NULL REFERENCES domains (id),
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  -- [{label, field_code, type, required}], validated by src/Domain/UtmTemplate.ts
  fields      jsonb NOT NULL CHECK (jsonb_typeof(fields) = 'array'),
  created     timestamptz NOT NULL DEFAULT now(),
  modified    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX utm_templates_domain ON utm_templates (domain_id, id);
