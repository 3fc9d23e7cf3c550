-- Cheaper storage per click (issue #16 item 3).
--
-- User agents are kept once, in a dictionary, and each click refers to its own by a 4-byte id: the
-- text (about 120 bytes for a browser) was half of a click row. Rows are never deleted from it, so
-- clicks need no foreign key (whose check would cost every insert); the raw clicks (R1) read the
-- text back through the id.
CREATE TABLE user_agents (
  id          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_agent  text NOT NULL UNIQUE
);

-- One index fewer per click: the primary key (id, at) served only the replay's conflict check, and
-- (link_id, at) the raw clicks of a link and link reports' partial days. One key (link_id, at, id)
-- serves all three: a replayed click has the same link, time and id; R1 reads it in its order
-- (at DESC, id DESC) without sorting.
ALTER TABLE clicks DROP CONSTRAINT clicks_pkey;
DROP INDEX clicks_link_at;

-- The clicks stored so far keep their user agent: each is entered in the dictionary, and the column
-- is rewritten in place as its id (one rewrite of every partition, which also gives back the space).
INSERT INTO user_agents (user_agent) SELECT DISTINCT user_agent FROM clicks ORDER BY 1;

CREATE FUNCTION user_agent_id_0012(text) RETURNS integer LANGUAGE sql STABLE
  AS 'SELECT id FROM user_agents WHERE user_agent = $1';
ALTER TABLE clicks ALTER COLUMN user_agent TYPE integer USING user_agent_id_0012(user_agent);
DROP FUNCTION user_agent_id_0012(text);
ALTER TABLE clicks RENAME COLUMN user_agent TO user_agent_id;

ALTER TABLE clicks ADD PRIMARY KEY (link_id, at, id);
