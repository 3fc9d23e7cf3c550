#!/usr/bin/env bash
# A short start on the embedded database, as a user would do it from a fresh clone: `npm start` on an
# empty DATA_DIR, log in as the bootstrap admin, create a domain, stop with SIGTERM (exit 0 expected,
# nothing left running), then `npm run cli -- migrate --json` on the same data (nothing to apply).
set -euo pipefail
cd "$(dirname "$0")/.."

WORK="$(mktemp -d "${TMPDIR:-/tmp}/links-smoke-XXXXXX")"
LOG="$WORK/server.log"
BODY="$WORK/body"
SERVER_PID=""

unset DATABASE_URL REDIS_URL TRUST_PROXY TOKEN_SECRET
export DATA_DIR="$WORK/data"
export HOST=127.0.0.1
export PORT="$(node -e 'const s = require("node:net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')"
export ADMIN_EMAIL="smoke-admin@example.com"
export ADMIN_PASSWORD="smoke test password $RANDOM$RANDOM"
export LOG_LEVEL=info
BASE="http://127.0.0.1:$PORT"
DOMAIN="smoke-$RANDOM$RANDOM.example"

fail() {
  echo "smoke: FAILED: $*" >&2
  if [ -s "$LOG" ]; then
    echo "--- last lines of the server output ($LOG)" >&2
    tail -n 30 "$LOG" >&2
  fi
  exit 1
}

# The server runs in its own process group (setsid) so that nothing it started can outlive the script.
# Zombies (exited, not yet reaped by a container's init) do not count.
group_members() { [ -n "$SERVER_PID" ] && ps -eo pid=,pgid=,stat=,args= | awk -v g="$SERVER_PID" '$2 == g && $3 !~ /^Z/'; }
group_alive() { [ -n "$(group_members)" ]; }

cleanup() {
  if group_alive; then kill -KILL -- "-$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# json PATH: the value at a dotted path (array indexes as numbers) of the JSON on stdin, or failure.
json() {
  node -e '
    let text = ""
    process.stdin.on("data", (d) => (text += d)).on("end", () => {
      let value = JSON.parse(text)
      for (const key of process.argv[1].split(".").filter((k) => k !== "")) value = value == null ? undefined : value[key]
      if (value === undefined) process.exit(1)
      console.log(typeof value === "object" ? JSON.stringify(value) : String(value))
    })' "$1"
}

# request METHOD PATH [BODY] [TOKEN]: prints the status; the body goes to $BODY.
request() {
  local args=(-sS -o "$BODY" -w '%{http_code}' -X "$1" "$BASE$2")
  if [ -n "${3:-}" ]; then args+=(-H 'content-type: application/json' --data "$3"); fi
  if [ -n "${4:-}" ]; then args+=(-H "authorization: Bearer $4"); fi
  curl "${args[@]}" || echo "000"
}

echo "smoke: npm start on DATA_DIR=$DATA_DIR, port $PORT"
setsid npm start >"$LOG" 2>&1 &
SERVER_PID=$!

for _ in $(seq 1 600); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz" || true)" = "200" ]; then break; fi
  kill -0 "$SERVER_PID" 2>/dev/null || fail "npm start exited before /readyz answered"
  sleep 0.2
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz" || true)" = "200" ] || fail "/readyz did not answer 200 within 120 s"
echo "smoke: ready"

[ "$(request GET /healthz)" = "200" ] || fail "/healthz did not answer 200"
if grep -q "generated password" "$LOG"; then fail "a password was generated although ADMIN_PASSWORD is set"; fi

status="$(request POST /api/v4/access_token "{\"email\":\"$ADMIN_EMAIL\",\"password\":\"$ADMIN_PASSWORD\"}")"
[ "$status" = "200" ] || fail "the bootstrap admin could not log in (E2): $status $(cat "$BODY")"
TOKEN="$(json access_token <"$BODY")" || fail "E2 answered no access_token: $(cat "$BODY")"
echo "smoke: the bootstrap admin logged in"

status="$(request POST /api/v4/domains "{\"domain\":\"$DOMAIN\"}" "$TOKEN")"
[ "$status" = "200" ] || fail "creating a domain (E9) answered $status: $(cat "$BODY")"
[ "$(json objects.0.domain <"$BODY")" = "$DOMAIN" ] || fail "E9 did not answer the created domain: $(cat "$BODY")"
DOMAIN_ID="$(json objects.0.id <"$BODY")" || fail "E9 answered no id: $(cat "$BODY")"

status="$(request GET "/api/v4/domains/$DOMAIN_ID" "" "$TOKEN")"
[ "$status" = "200" ] || fail "reading the domain back (E7) answered $status: $(cat "$BODY")"
[ "$(json objects.0.domain <"$BODY")" = "$DOMAIN" ] || fail "E7 answered another domain: $(cat "$BODY")"
echo "smoke: created domain $DOMAIN_ID $DOMAIN"

status="$(request POST "/api/v4/$DOMAIN_ID/links" '{"url":"https://example.com/smoke","alias":"smoke","override_404_check":1}' "$TOKEN")"
[ "$status" = "200" ] || fail "creating a link (E4) answered $status: $(cat "$BODY")"
LINK_ID="$(json objects.0.id <"$BODY")" || fail "E4 answered no id: $(cat "$BODY")"
# A browser's user agent: curl's own is a bot's, recorded but never counted.
redirect="$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -H "Host: $DOMAIN" \
  -A 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36' "$BASE/smoke?ref=ci")"
[ "$redirect" = "301 https://example.com/smoke?ref=ci" ] || fail "the short link answered '$redirect'"
clicks=""
for _ in $(seq 1 50); do
  request GET "/api/v4/$DOMAIN_ID/links/$LINK_ID" "" "$TOKEN" >/dev/null
  clicks="$(json objects.0.click_count <"$BODY")" || true
  [ "$clicks" = "1" ] && break
  sleep 0.2
done
[ "$clicks" = "1" ] || fail "click_count is '$clicks' 10 s after one redirect, expected 1"
echo "smoke: the short link redirected and its click was counted"

kill -TERM "$SERVER_PID"
for _ in $(seq 1 100); do
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.2
done
kill -0 "$SERVER_PID" 2>/dev/null && fail "npm start still running 20 s after SIGTERM"
code=0
wait "$SERVER_PID" || code=$?
sleep 0.5
if group_alive; then
  group_members >&2 || true
  fail "npm start exited with $code on SIGTERM but left the service running (the start script must exec the service so that npm's SIGTERM reaches it)"
fi
[ "$code" = "0" ] || fail "npm start exited with code $code on SIGTERM, expected 0"
curl -s -o /dev/null "$BASE/healthz" && fail "the port still accepts connections after the server stopped"
echo "smoke: stopped cleanly on SIGTERM"

if [ -f src/cli.ts ]; then
  out="$(npm run --silent cli -- migrate --json)" || fail "npm run cli -- migrate --json failed: $out"
  applied="$(printf '%s' "$out" | json applied)" || fail "migrate --json did not answer {applied}: $out"
  [ "$applied" = "[]" ] || fail "migrate after the server's start applied $applied, expected nothing"
  echo "smoke: cli migrate --json: $out"
fi

echo "smoke: OK"
