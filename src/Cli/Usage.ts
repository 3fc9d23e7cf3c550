export const USAGE = `Usage: npm run cli -- <command> [options] [--json]

Commands:
  account create --name N --plan free|team|business|enterprise [--link-quota N]
      a new account; without --link-quota its links are unlimited
  user create --account ID --email E --password P [--nickname N] [--first-name F] [--last-name L]
              [--role account_admin|member]
      a new user of the account (role member unless given); prints its refresh token once
  user refresh-token --email E
      a new refresh token for the user; the old one and the user's access tokens stop working
  user disable --email E
      the user can no longer log in; their access tokens stop working
  user enable --email E
      a disabled user can log in again
  user password --email E --password P
      a new password for the user (the rules of user create); their access tokens stop working
  domain admin --user ID --domain ID
      makes the user an admin of the domain (both of the same account)
  domain ssl --domain ID --on|--off
      whether short links of the domain start with https://
  utm-template create --domain ID --name N --fields JSON
      a UTM template of the domain; JSON is an array of at most 20
      {"label": "...", "field_code": "utm_source", "type": "text", "required": true}
  group create --domain ID --name N [--global] [--owner ID] [--user ID]...
      a group of links of the domain (names unique per domain, ignoring case); a global group is
      seen by every user of the account, another by its owner (default: the account admin with the
      lowest id) and each --user, who must be of the domain's account
  group add-link --group ID --link ID
      puts a link of the group's domain in the group
  group add-user --group ID --user ID
      lets a user of the domain's account see the group
  group list --domain ID
      every group of the domain
  migrate
      applies the pending database migrations

Options of every command:
  --json   print exactly one JSON object on stdout (on failure: {"error": "..."})
  --help   print this text

The database is PostgreSQL at DATABASE_URL when it is set, otherwise the embedded one in DATA_DIR
(./data), which only one process can open at a time.`
