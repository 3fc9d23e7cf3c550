/** One command as the help shows it. */
interface Help {
  readonly synopsis: string
  readonly description: string
}

const PASSWORD = "--password P | --password-stdin"

export const HELP: Readonly<Record<string, Help>> = {
  "account create": {
    synopsis: "account create --name N --plan free|team|business|enterprise [--link-quota N]",
    description: "a new account; without --link-quota its links are unlimited"
  },
  "account list": { synopsis: "account list [--page N]", description: "every account, 50 a page, with its numbers of users, domains and links" },
  "account show": { synopsis: "account show --account ID", description: "one account" },
  "user create": {
    synopsis: `user create --account ID --email E [${PASSWORD}] [--nickname N] [--first-name F] [--last-name L]\n              [--role account_admin|member]`,
    description:
      "a new user of the account (role member unless given); prints its refresh token once.\n" +
      "The password is read from stdin with --password-stdin (one line), else asked for on the terminal\n" +
      "without echo; --password P is for scripts, but any user of the machine sees it in `ps`."
  },
  "user list": { synopsis: "user list [--account ID] [--page N]", description: "every user (of the account), 50 a page" },
  "user show": { synopsis: "user show --email E", description: "one user: role, whether disabled, links, live access tokens, domains administered" },
  "user refresh-token": {
    synopsis: "user refresh-token --email E",
    description: "a new refresh token for the user; the old one and the user's access tokens stop working"
  },
  "user revoke-tokens": {
    synopsis: "user revoke-tokens --email E",
    description: "the user's access tokens stop working on every instance (password and refresh token stay)"
  },
  "user disable": { synopsis: "user disable --email E", description: "the user can no longer log in; their access tokens stop working" },
  "user enable": { synopsis: "user enable --email E", description: "a disabled user can log in again" },
  "user delete": {
    synopsis: "user delete --email E [--reassign-to USER]",
    description:
      "deletes a user who owns no links, tags or groups (otherwise: user disable); with --reassign-to (an id or\n" +
      "e-mail of an enabled user of the same account) the user's links, tags, groups and their clicks go to that user"
  },
  "user password": {
    synopsis: `user password --email E [${PASSWORD}]`,
    description:
      "a new password for the user (the rules of user create), read as user create reads it;\n" +
      "their access tokens stop working"
  },
  "token-secret rotate": {
    synopsis: "token-secret rotate",
    description:
      "a new token secret in DATA_DIR/token-secret, taken by running instances at their next login;\n" +
      "every access token stops working (users log in again; refresh tokens stay). With TOKEN_SECRET set,\n" +
      "change it on every instance instead"
  },
  "domain list": { synopsis: "domain list [--account ID] [--page N]", description: "every domain (of the account), 50 a page" },
  "domain show": { synopsis: "domain show --domain ID", description: "one domain" },
  "domain admin": { synopsis: "domain admin --user ID --domain ID", description: "makes the user an admin of the domain (both of the same account)" },
  "domain ssl": { synopsis: "domain ssl --domain ID --on|--off", description: "whether short links of the domain start with https://" },
  "link list": { synopsis: "link list --domain ID [--page N]", description: "every link of the domain, deleted ones too, 50 a page" },
  "link show": { synopsis: "link show --link ID", description: "one link" },
  "link settings": { synopsis: "link settings --link ID", description: "the link's smart settings (rules, split, limits, preview; password_set, never the password)" },
  "link set-settings": {
    synopsis: "link set-settings --link ID --file F",
    description: "replaces every smart setting of the link with the JSON object in file F (the body of PUT .../settings;\n{} clears them), checked as the API checks it"
  },
  "utm-template create": {
    synopsis: "utm-template create --domain ID --name N --fields JSON",
    description:
      "a UTM template of the domain; JSON is an array of at most 20\n" +
      '{"label": "...", "field_code": "utm_source", "type": "text", "required": true}'
  },
  "group create": {
    synopsis: "group create --domain ID --name N [--global] [--owner ID] [--user ID]...",
    description:
      "a group of links of the domain (names unique per domain, ignoring case); a global group is\n" +
      "seen by every user of the account, another by its owner (default: the account admin with the\n" +
      "lowest id) and each --user, who must be of the domain's account"
  },
  "group add-link": { synopsis: "group add-link --group ID --link ID", description: "puts a link of the group's domain in the group" },
  "group add-user": { synopsis: "group add-user --group ID --user ID", description: "lets a user of the domain's account see the group" },
  "group list": { synopsis: "group list --domain ID", description: "every group of the domain" },
  import: {
    synopsis: "import --from csv|shlink|yourls|kutt|bitly FILE --domain ID [--user ID] [--dry-run] [--batch-size N]",
    description:
      "links exported by another shortener, into the domain (owned by --user, default the account's first\n" +
      "admin); the link rules of E4 apply, an alias the domain holds is a conflict (listed, never\n" +
      "overwritten); --dry-run writes nothing; run again after a stop, it continues where it stopped.\n" +
      "With --json: one JSON line per conflict, invalid row and batch, then the summary (README \"Import\")"
  },
  "export links": {
    synopsis: "export links --domain ID [--output FILE]",
    description:
      "the domain's links that are not deleted, as CSV (the API's links export), to FILE (written whole\n" +
      "or not at all) or standard output"
  },
  "export clicks": {
    synopsis: "export clicks --domain ID --from UNIX --to UNIX [--link ID] [--output FILE]",
    description:
      "the domain's clicks from --from (inclusive) to --to (exclusive), at most a year, of one link with\n" +
      "--link, as CSV (the API's clicks export), to FILE or standard output; deleted domains too"
  },
  "webhook list": { synopsis: "webhook list --domain ID", description: "the webhooks of the domain (secrets are never shown again)" },
  "webhook create": {
    synopsis: "webhook create --domain ID --url URL --events E[,E]...",
    description:
      "a webhook of the domain for link.created, link.updated, link.archived, link.deleted, link.clicked;\n" +
      "the URL must not lead to a private address; prints its signing secret once"
  },
  "webhook delete": { synopsis: "webhook delete --webhook ID", description: "deletes the webhook, its pending deliveries and its delivery log" },
  "webhook rotate-secret": {
    synopsis: "webhook rotate-secret --webhook ID",
    description: "a new signing secret, printed once; the previous one also signs deliveries for 24 hours"
  },
  "webhook deliveries": { synopsis: "webhook deliveries --webhook ID [--page N]", description: "the webhook's delivery log, newest first, 50 a page" },
  "webhook replay": { synopsis: "webhook replay --delivery ID", description: "sends the delivery again (same Webhook-Id) as soon as an instance takes it" },
  migrate: { synopsis: "migrate", description: "applies the pending database migrations" }
}

const indent = (text: string) => text.split("\n").map((line) => `      ${line}`).join("\n")

const COMMON = `Options of every command:
  --json      print exactly one JSON object on stdout (on failure: {"error": "..."}); without it,
              lists and records are printed as tables
  --help      print the help (of the command given)
  --version   print the version

The database is PostgreSQL at DATABASE_URL when it is set, otherwise the embedded one in DATA_DIR
(./data): through the running server's socket while it runs, else opened by the command itself.`

const listed = (helps: ReadonlyArray<Help>) => helps.map((help) => `  ${help.synopsis}\n${indent(help.description)}`).join("\n")

export const USAGE = `Usage: npm run cli -- <command> [options] [--json]

Commands:
${listed(Object.values(HELP))}

${COMMON}`

/** The help of one command; of a group's commands for its first word (`user --help`); else the whole usage. */
export const commandUsage = (command: string) => {
  const help = HELP[command]
  if (help !== undefined) return `Usage: npm run cli -- ${help.synopsis} [--json]\n\n${help.description}\n\n${COMMON}`
  const group = Object.entries(HELP).filter(([name]) => name.startsWith(`${command} `))
  return group.length === 0
    ? USAGE
    : `Usage: npm run cli -- ${command} <command> [options] [--json]\n\nCommands:\n${listed(group.map(([, of]) => of))}\n\n${COMMON}`
}
