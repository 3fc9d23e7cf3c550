import { Effect, Option, ParseResult, Schema } from "effect"
import { UtmFields, UtmTemplateName } from "../Tags/UtmTemplate.ts"
import { Plan, Role } from "../Accounts/User.ts"
import type { UserRef } from "../Accounts/Accounts.ts"
import { emailProblem } from "../Accounts/EmailAddress.ts"
import { passwordProblem } from "../Auth/PasswordRules.ts"
import { MAX_GROUP_NAME_LENGTH } from "../Groups/Group.ts"
import { IMPORT_SOURCES } from "../Import/SourceNames.ts"
import { Command, DEFAULT_IMPORT_BATCH, type PasswordSource, UsageError } from "./Command.ts"
import { isHelpOrVersion, type OptionName, scanCommandLine } from "./Options.ts"
import { LAST_SECOND, UnixSecond } from "../Analytics/UnixSecond.ts"
import { WEBHOOK_EVENTS, type WebhookEvent } from "../Webhooks/Webhook.ts"

const usage = (message: string) => new UsageError({ message })

const idOf = (name: OptionName, raw: string): Effect.Effect<number, UsageError> =>
  /^[1-9][0-9]{0,15}$/.test(raw) && Number.isSafeInteger(Number(raw))
    ? Effect.succeed(Number(raw))
    : Effect.fail(usage(`--${name} must be a positive whole number, not "${raw}"`))

/** The options given to one command, with the checks every command shares. */
class Given {
  constructor(
    readonly command: string,
    private readonly values: ReadonlyMap<OptionName, ReadonlyArray<string>>,
    /** The words after the command's own (only a command with `operand` takes one). */
    readonly operands: ReadonlyArray<string> = []
  ) {}

  optional(name: OptionName): Option.Option<string> {
    return Option.fromNullable(this.values.get(name)?.[0])
  }

  has(name: OptionName): boolean {
    return this.values.has(name)
  }

  required(name: OptionName): Effect.Effect<string, UsageError> {
    return Option.match(this.optional(name), {
      onNone: () => Effect.fail(usage(`${this.command} needs --${name}`)),
      onSome: Effect.succeed
    })
  }

  id(name: OptionName): Effect.Effect<number, UsageError> {
    return Effect.flatMap(this.required(name), (raw) => idOf(name, raw))
  }

  /** Every value of a repeatable option, each an id. */
  ids(name: OptionName): Effect.Effect<ReadonlyArray<number>, UsageError> {
    return Effect.forEach(this.values.get(name) ?? [], (raw) => idOf(name, raw))
  }

  oneOf<const L extends ReadonlyArray<string>>(name: OptionName, literals: L, fallback?: L[number]): Effect.Effect<L[number], UsageError> {
    const raw = this.optional(name)
    if (Option.isNone(raw) && fallback !== undefined) return Effect.succeed(fallback)
    return Effect.flatMap(this.required(name), (value) => {
      const found = literals.find((literal) => literal === value)
      return found === undefined
        ? Effect.fail(usage(`--${name} must be one of ${literals.join(", ")}, not "${value}"`))
        : Effect.succeed(found)
    })
  }
}

const text = (given: Given, name: OptionName, max: number) =>
  Effect.flatMap(given.required(name), (value) =>
    value.trim() === "" || value.length > max
      ? Effect.fail(usage(`--${name} must have 1 to ${max} characters`))
      : Effect.succeed(value.trim())
  )

const checked = (problem: string | undefined) => (problem === undefined ? Effect.void : Effect.fail(usage(problem)))

const linkQuota = (given: Given) =>
  Option.match(given.optional("link-quota"), {
    onNone: () => Effect.succeed(null),
    onSome: (raw) =>
      /^[0-9]{1,15}$/.test(raw) && Number(raw) <= 2_147_483_647
        ? Effect.succeed(Number(raw))
        : Effect.fail(usage(`--link-quota must be a whole number from 0 to 2147483647, not "${raw}"`))
  })

const issuePath = (path: ReadonlyArray<PropertyKey>) =>
  path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("")

const fields = (given: Given) =>
  Effect.gen(function* () {
    const raw = yield* given.required("fields")
    const json = yield* Effect.try({
      try: (): unknown => JSON.parse(raw),
      catch: (error) => usage(`--fields is not valid JSON (${error instanceof Error ? error.message : String(error)})`)
    })
    return yield* Schema.decodeUnknown(UtmFields, { errors: "all", onExcessProperty: "error" })(json).pipe(
      Effect.mapError((error) => {
        const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
        return usage(`--fields is not valid: ${issues.map((issue) => `fields${issuePath(issue.path)}: ${issue.message}`).join("; ")}`)
      })
    )
  })

const templateName = (given: Given) =>
  Effect.flatMap(given.required("name"), (name) =>
    Schema.decodeUnknown(UtmTemplateName)(name.trim()).pipe(
      Effect.mapError(() => usage("--name must have 1 to 100 characters"))
    )
  )

/** `--password P` (checked here), `--password-stdin`, or neither: a prompt (checked once read). */
const passwordSource = (given: Given, email: string): Effect.Effect<PasswordSource, UsageError> => {
  if (given.has("password") && given.has("password-stdin")) {
    return Effect.fail(usage(`${given.command} takes --password or --password-stdin, not both`))
  }
  if (given.has("password-stdin")) return Effect.succeed({ _tag: "Stdin" })
  if (!given.has("password")) return Effect.succeed({ _tag: "Prompt" })
  return Effect.flatMap(given.required("password"), (password) =>
    Effect.as(checked(passwordProblem(password, email)), { _tag: "Given", password } as const)
  )
}

const page = (given: Given) => (given.has("page") ? given.id("page") : Effect.succeed(1))

const optionalAccount = (given: Given) => (given.has("account") ? given.id("account") : Effect.succeed(null))

const readUnixSecond = Schema.decodeUnknownOption(UnixSecond)

/** `--from` / `--to`: a window bound by the rule of the API's `from_unix` and `to_unix`. */
const unixSecond = (given: Given, name: "from" | "to") =>
  Effect.flatMap(given.required(name), (raw) =>
    Option.match(readUnixSecond(raw), {
      onSome: Effect.succeed,
      onNone: () => Effect.fail(usage(`--${name} must be a Unix time in seconds from 0 to ${LAST_SECOND}, not "${raw}"`))
    })
  )

/** `--output FILE`, else standard output, which then holds the CSV alone (no `--json` answer beside it). */
const output = (given: Given) =>
  Effect.gen(function* () {
    if (given.has("output")) return yield* text(given, "output", 4096)
    if (given.has("json")) return yield* usage(`${given.command} --json needs --output: without it, standard output holds the CSV`)
    return undefined
  })

/** `--events a,b`: each one of the webhook events, at least one. */
const webhookEvents = (given: Given) =>
  Effect.flatMap(given.required("events"), (raw) => {
    const names = raw.split(",").map((name) => name.trim())
    const events = names.flatMap((name) => WEBHOOK_EVENTS.filter((event): event is WebhookEvent => event === name))
    return events.length === names.length && events.length > 0
      ? Effect.succeed(events)
      : Effect.fail(usage(`--events must be a comma-separated list of ${WEBHOOK_EVENTS.join(", ")}, not "${raw}"`))
  })

/** `--reassign-to`: a user's id or e-mail address. */
const heir = (given: Given): Effect.Effect<UserRef | undefined, UsageError> =>
  Option.match(given.optional("reassign-to"), {
    onNone: () => Effect.succeed(undefined),
    onSome: (raw) => {
      const value = raw.trim()
      if (/^[1-9][0-9]{0,15}$/.test(value) && Number.isSafeInteger(Number(value))) return Effect.succeed({ id: Number(value) })
      return emailProblem(value) === undefined
        ? Effect.succeed({ email: value })
        : Effect.fail(usage(`--reassign-to must be a user id or an e-mail address, not "${raw}"`))
    }
  })

const byEmail = (make: (email: string) => Command): CommandSpec => ({
  options: ["email"],
  build: (given) => Effect.map(text(given, "email", 254), make)
})

interface CommandSpec {
  readonly options: ReadonlyArray<OptionName>
  /** Options that may be given more than once; any other given twice is refused. */
  readonly repeatable?: ReadonlyArray<OptionName>
  /** The name of the one word the command takes after its own (import's FILE). */
  readonly operand?: string
  readonly build: (given: Given) => Effect.Effect<Command, UsageError>
}

const commands: Readonly<Record<string, CommandSpec>> = {
  "account create": {
    options: ["name", "plan", "link-quota"],
    build: (given) =>
      Effect.gen(function* () {
        const name = yield* text(given, "name", 200)
        const plan = yield* given.oneOf("plan", Plan.literals)
        return Command.AccountCreate({ name, plan, linkQuota: yield* linkQuota(given) })
      })
  },
  "account list": { options: ["page"], build: (given) => Effect.map(page(given), (page) => Command.AccountList({ page })) },
  "account show": { options: ["account"], build: (given) => Effect.map(given.id("account"), (accountId) => Command.AccountShow({ accountId })) },
  "user create": {
    options: ["account", "email", "password", "password-stdin", "nickname", "first-name", "last-name", "role"],
    build: (given) =>
      Effect.gen(function* () {
        const accountId = yield* given.id("account")
        const email = (yield* given.required("email")).trim()
        yield* checked(emailProblem(email))
        const password = yield* passwordSource(given, email)
        const nickname = given.has("nickname") ? yield* text(given, "nickname", 100) : undefined
        const firstName = given.has("first-name") ? yield* text(given, "first-name", 200) : undefined
        const lastName = given.has("last-name") ? yield* text(given, "last-name", 200) : undefined
        const role = yield* given.oneOf("role", Role.literals, "member")
        return Command.UserCreate({ accountId, email, password, nickname, firstName, lastName, role })
      })
  },
  "user list": {
    options: ["account", "page"],
    build: (given) =>
      Effect.gen(function* () {
        return Command.UserList({ accountId: yield* optionalAccount(given), page: yield* page(given) })
      })
  },
  "user show": byEmail((email) => Command.UserShow({ email })),
  "user refresh-token": byEmail((email) => Command.UserRefreshToken({ email })),
  "user revoke-tokens": byEmail((email) => Command.UserRevokeTokens({ email })),
  "user disable": byEmail((email) => Command.UserDisable({ email })),
  "user enable": byEmail((email) => Command.UserEnable({ email })),
  "user delete": {
    options: ["email", "reassign-to"],
    build: (given) =>
      Effect.all({ email: text(given, "email", 254), reassignTo: heir(given) }).pipe(Effect.map(Command.UserDelete))
  },
  "user password": {
    options: ["email", "password", "password-stdin"],
    build: (given) =>
      Effect.gen(function* () {
        const email = yield* text(given, "email", 254)
        return Command.UserPassword({ email, password: yield* passwordSource(given, email) })
      })
  },
  "token-secret rotate": { options: [], build: () => Effect.succeed(Command.TokenSecretRotate()) },
  "domain list": {
    options: ["account", "page"],
    build: (given) =>
      Effect.gen(function* () {
        return Command.DomainList({ accountId: yield* optionalAccount(given), page: yield* page(given) })
      })
  },
  "domain show": { options: ["domain"], build: (given) => Effect.map(given.id("domain"), (domainId) => Command.DomainShow({ domainId })) },
  "link list": {
    options: ["domain", "page"],
    build: (given) =>
      Effect.gen(function* () {
        return Command.LinkList({ domainId: yield* given.id("domain"), page: yield* page(given) })
      })
  },
  "link show": { options: ["link"], build: (given) => Effect.map(given.id("link"), (linkId) => Command.LinkShow({ linkId })) },
  "link settings": { options: ["link"], build: (given) => Effect.map(given.id("link"), (linkId) => Command.LinkSettings({ linkId })) },
  "link set-settings": {
    options: ["link", "file"],
    build: (given) =>
      Effect.gen(function* () {
        return Command.LinkSetSettings({ linkId: yield* given.id("link"), file: yield* given.required("file") })
      })
  },
  "domain admin": {
    options: ["user", "domain"],
    build: (given) =>
      Effect.gen(function* () {
        return Command.DomainAdmin({ userId: yield* given.id("user"), domainId: yield* given.id("domain") })
      })
  },
  "domain ssl": {
    options: ["domain", "on", "off"],
    build: (given) =>
      Effect.gen(function* () {
        const domainId = yield* given.id("domain")
        if (given.has("on") === given.has("off")) return yield* usage("domain ssl needs exactly one of --on and --off")
        return Command.DomainSsl({ domainId, hasSsl: given.has("on") })
      })
  },
  "utm-template create": {
    options: ["domain", "name", "fields"],
    build: (given) =>
      Effect.gen(function* () {
        const domainId = yield* given.id("domain")
        const name = yield* templateName(given)
        return Command.UtmTemplateCreate({ domainId, name, fields: yield* fields(given) })
      })
  },
  "group create": {
    options: ["domain", "name", "global", "owner", "user"],
    repeatable: ["user"],
    build: (given) =>
      Effect.gen(function* () {
        const domainId = yield* given.id("domain")
        const name = yield* text(given, "name", MAX_GROUP_NAME_LENGTH)
        const owner = given.has("owner") ? yield* given.id("owner") : undefined
        return Command.GroupCreate({ domainId, name, global: given.has("global"), owner, users: yield* given.ids("user") })
      })
  },
  "group add-link": {
    options: ["group", "link"],
    build: (given) =>
      Effect.gen(function* () {
        return Command.GroupAddLink({ groupId: yield* given.id("group"), linkId: yield* given.id("link") })
      })
  },
  "group add-user": {
    options: ["group", "user"],
    build: (given) =>
      Effect.gen(function* () {
        return Command.GroupAddUser({ groupId: yield* given.id("group"), userId: yield* given.id("user") })
      })
  },
  "group list": { options: ["domain"], build: (given) => Effect.map(given.id("domain"), (domainId) => Command.GroupList({ domainId })) },
  import: {
    options: ["from", "domain", "user", "dry-run", "batch-size"],
    operand: "FILE",
    build: (given) =>
      Effect.gen(function* () {
        const source = yield* given.oneOf("from", IMPORT_SOURCES)
        const path = given.operands[0]
        if (path === undefined || path === "") return yield* usage("import needs the FILE to import")
        const domainId = yield* given.id("domain")
        const userId = given.has("user") ? yield* given.id("user") : undefined
        const batchSize = given.has("batch-size") ? yield* given.id("batch-size") : DEFAULT_IMPORT_BATCH
        if (batchSize > 10_000) return yield* usage("--batch-size must be at most 10000")
        return Command.Import({ path, source, domainId, userId, dryRun: given.has("dry-run"), batchSize, json: given.has("json") })
      })
  },
  "export links": {
    options: ["domain", "output"],
    build: (given) =>
      Effect.gen(function* () {
        return Command.ExportLinks({ domainId: yield* given.id("domain"), output: yield* output(given) })
      })
  },
  "export clicks": {
    options: ["domain", "from", "to", "link", "output"],
    build: (given) =>
      Effect.gen(function* () {
        const domainId = yield* given.id("domain")
        const from = yield* unixSecond(given, "from")
        const to = yield* unixSecond(given, "to")
        const linkId = given.has("link") ? yield* given.id("link") : undefined
        return Command.ExportClicks({ domainId, from, to, linkId, output: yield* output(given) })
      })
  },
  "webhook list": { options: ["domain"], build: (given) => Effect.map(given.id("domain"), (domainId) => Command.WebhookList({ domainId })) },
  "webhook create": {
    options: ["domain", "url", "events"],
    build: (given) =>
      Effect.gen(function* () {
        const domainId = yield* given.id("domain")
        return Command.WebhookCreate({ domainId, url: yield* given.required("url"), events: yield* webhookEvents(given) })
      })
  },
  "webhook delete": { options: ["webhook"], build: (given) => Effect.map(given.id("webhook"), (webhookId) => Command.WebhookDelete({ webhookId })) },
  "webhook rotate-secret": {
    options: ["webhook"],
    build: (given) => Effect.map(given.id("webhook"), (webhookId) => Command.WebhookRotateSecret({ webhookId }))
  },
  "webhook deliveries": {
    options: ["webhook", "page"],
    build: (given) =>
      Effect.gen(function* () {
        return Command.WebhookDeliveries({ webhookId: yield* given.id("webhook"), page: yield* page(given) })
      })
  },
  "webhook replay": { options: ["delivery"], build: (given) => Effect.map(given.id("delivery"), (deliveryId) => Command.WebhookReplay({ deliveryId })) },
  migrate: { options: [], build: () => Effect.succeed(Command.Migrate()) }
}

export interface Invocation {
  readonly json: boolean
  readonly command: Effect.Effect<Command, UsageError>
}

/** Reads the command line; `json` is known even when the rest of it is wrong. */
export const parseInvocation = (argv: ReadonlyArray<string>): Invocation => {
  const { json, scanned } = scanCommandLine(argv)
  const command = Effect.gen(function* () {
    if (scanned._tag === "Problem") return yield* usage(scanned.message)
    const { words, values, spoken } = scanned
    const spec = commands[spoken]
    if (values.has("version")) return Command.Version()
    if (isHelpOrVersion(scanned)) return Command.Help({ command: spec === undefined ? undefined : spoken })
    if (spec === undefined) return yield* usage(`unknown command "${words.join(" ")}"`)
    const operands = words.slice(spoken.split(" ").length)
    const extra = operands[spec.operand === undefined ? 0 : 1]
    if (extra !== undefined) return yield* usage(`unexpected argument "${extra}"`)
    for (const [name, given] of values) {
      if (given.length > 1 && !spec.repeatable?.includes(name)) return yield* usage(`--${name} is given twice`)
      if (name !== "json" && name !== "version" && !spec.options.includes(name)) return yield* usage(`--${name} is not an option of ${spoken}`)
    }
    return yield* spec.build(new Given(spoken, values, operands))
  })
  return { json, command }
}
