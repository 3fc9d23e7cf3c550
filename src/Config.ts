import { Config, ConfigError, ConfigProvider, Context, Effect, Either, Layer, LogLevel, Option } from "effect"
import { ProxyList } from "./Platform/ClientIp.ts"
import { parseHttpUrl } from "./Links/Url.ts"

/** An integer variable within bounds; a value outside them is refused naming the variable. */
const integerIn = (name: string, fallback: number, min: number, max: number, rule: string) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.mapOrFail((n) =>
      n >= min && n <= max ? Either.right(n) : Either.left(ConfigError.InvalidData([name], `${rule}, got ${n}`))
    )
  )

const boolean = (name: string) => Config.boolean(name).pipe(Config.withDefault(false))

const optionalSecret = (name: string) => Config.option(Config.redacted(name))

/** Effect's level names, and the spellings pino, Fastify, syslog and most Node services accept. */
const levels: Readonly<Record<string, LogLevel.LogLevel>> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  err: LogLevel.Error,
  fatal: LogLevel.Fatal,
  critical: LogLevel.Fatal,
  crit: LogLevel.Fatal,
  none: LogLevel.None,
  silent: LogLevel.None,
  off: LogLevel.None
}

const logLevel = Config.string("LOG_LEVEL").pipe(
  Config.withDefault("info"),
  Config.mapOrFail((raw) => {
    const level = levels[raw.trim().toLowerCase()]
    return level === undefined
      ? Either.left(ConfigError.InvalidData(["LOG_LEVEL"], `must be one of ${Object.keys(levels).join(", ")}; got ${JSON.stringify(raw)}`))
      : Either.right(level)
  })
)

const trustProxy = Config.string("TRUST_PROXY").pipe(
  Config.withDefault(""),
  Config.mapOrFail((raw) => ProxyList.parse(raw, "TRUST_PROXY"))
)

const nonEmptyOptionalString = (name: string) =>
  Config.option(Config.string(name)).pipe(Config.map(Option.filter((s) => s.trim() !== "")))

/** A full http(s) URL, normalised as domains store it; anything else is refused naming the variable. */
const optionalUrl = (name: string) =>
  nonEmptyOptionalString(name).pipe(
    Config.mapOrFail(
      Option.match({
        onNone: () => Either.right(Option.none<string>()),
        onSome: (raw) => {
          const url = parseHttpUrl(raw.trim(), { assumeHttp: false })
          return url === undefined
            ? Either.left(ConfigError.InvalidData([name], `must be a full http or https URL; got ${JSON.stringify(raw)}`))
            : Either.right(Option.some(url))
        }
      })
    )
  )

/** Between 0 and 1, as a decimal number; a value outside is refused naming the variable. */
const ratioIn = (name: string, fallback: number) =>
  Config.number(name).pipe(
    Config.withDefault(fallback),
    Config.mapOrFail((n) =>
      n >= 0 && n <= 1 ? Either.right(n) : Either.left(ConfigError.InvalidData([name], `must be a number from 0 to 1, got ${n}`))
    )
  )

/** OpenTelemetry's sampler names (the specification's `OTEL_TRACES_SAMPLER` values this SDK knows). */
export const traceSamplers = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"] as const
export type TraceSamplerName = (typeof traceSamplers)[number]

const isSamplerName = (name: string): name is TraceSamplerName => traceSamplers.some((known) => known === name)

const traceSampler = Config.string("OTEL_TRACES_SAMPLER").pipe(
  Config.withDefault("parentbased_always_on"),
  Config.mapOrFail((raw) => {
    const name = raw.trim().toLowerCase()
    return isSamplerName(name)
      ? Either.right(name)
      : Either.left(ConfigError.InvalidData(["OTEL_TRACES_SAMPLER"], `must be one of ${traceSamplers.join(", ")}; got ${JSON.stringify(raw)}`))
  })
)

/**
 * Where spans go: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT`
 * with `/v1/traces` appended (the specification's rule for OTLP/HTTP); neither set, no tracing.
 */
const otlpTracesEndpoint = Config.all({
  traces: nonEmptyOptionalString("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
  base: nonEmptyOptionalString("OTEL_EXPORTER_OTLP_ENDPOINT")
}).pipe(
  Config.mapOrFail(({ traces, base }) => {
    const [name, url] = Option.isSome(traces)
      ? ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", traces.value.trim()]
      : Option.isSome(base)
        ? ["OTEL_EXPORTER_OTLP_ENDPOINT", `${base.value.trim().replace(/\/+$/, "")}/v1/traces`]
        : [undefined, undefined]
    if (name === undefined || url === undefined) return Either.right(Option.none<string>())
    return URL.canParse(url) && /^https?:$/.test(new URL(url).protocol)
      ? Either.right(Option.some(url))
      : Either.left(ConfigError.InvalidData([name], `must be an http or https URL; got ${JSON.stringify(url)}`))
  })
)

/** `key1=value1,key2=value2`, percent-encoded values (the specification's `OTEL_RESOURCE_ATTRIBUTES`). */
const resourceAttributes = Config.string("OTEL_RESOURCE_ATTRIBUTES").pipe(
  Config.withDefault(""),
  Config.mapOrFail((raw) => {
    const attributes: Record<string, string> = {}
    for (const pair of raw.split(",")) {
      if (pair.trim() === "") continue
      const equals = pair.indexOf("=")
      const key = equals > 0 ? pair.slice(0, equals).trim() : ""
      let value: string | undefined
      try {
        value = decodeURIComponent(pair.slice(equals + 1).trim())
      } catch {
        value = undefined
      }
      if (key === "" || value === undefined) {
        return Either.left(ConfigError.InvalidData(["OTEL_RESOURCE_ATTRIBUTES"], `must be key=value pairs separated by commas; got ${JSON.stringify(pair)}`))
      }
      attributes[key] = value
    }
    return Either.right(attributes)
  })
)

/** Every environment variable the service reads, typed, with its default (see README "Configuration"). */
export const appConfig = Config.all({
  port: integerIn("PORT", 8080, 0, 65535, "must be a port number from 0 to 65535"),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  databaseUrl: optionalSecret("DATABASE_URL"),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./data")),
  redisUrl: optionalSecret("REDIS_URL"),
  trustProxy,
  rateLimitPerSecond: integerIn("RATE_LIMIT_PER_SECOND", 5, 1, 1_000_000_000, "must be a positive integer"),
  rateLimitPerTokenPerSecond: integerIn("RATE_LIMIT_PER_TOKEN_PER_SECOND", 10, 1, 1_000_000_000, "must be a positive integer"),
  urlCheckAllowPrivate: boolean("URL_CHECK_ALLOW_PRIVATE"),
  smtpUrl: optionalSecret("SMTP_URL"),
  mailFrom: Config.string("MAIL_FROM").pipe(Config.withDefault("links@localhost")),
  logLevel,
  adminEmail: nonEmptyOptionalString("ADMIN_EMAIL"),
  adminPassword: Config.option(Config.redacted("ADMIN_PASSWORD")),
  tokenSecret: optionalSecret("TOKEN_SECRET"),
  dbPoolSize: integerIn("DB_POOL_SIZE", 10, 1, 200, "must be from 1 to 200"),
  apiDeadlineSeconds: integerIn("API_DEADLINE_SECONDS", 20, 1, 600, "must be from 1 to 600"),
  shutdownDrainSeconds: integerIn("SHUTDOWN_DRAIN_SECONDS", 5, 0, 600, "must be from 0 to 600"),
  /** An analytics report not finished by then fails with 503 10508 and its statement is cancelled. */
  analyticsTimeoutSeconds: integerIn("ANALYTICS_TIMEOUT_SECONDS", 10, 1, 600, "must be from 1 to 600"),
  /** Analytics reports one account may have running at once; one more is refused with 503 10901. */
  analyticsConcurrencyPerAccount: integerIn("ANALYTICS_CONCURRENCY_PER_ACCOUNT", 2, 1, 100, "must be from 1 to 100"),
  /** What a domain created without `url_404` / `homepage` gets. */
  defaultUrl404: optionalUrl("DEFAULT_URL_404"),
  defaultHomepage: optionalUrl("DEFAULT_HOMEPAGE"),
  /** When set, `/metrics` answers only `Authorization: Bearer <METRICS_TOKEN>`. */
  metricsToken: optionalSecret("METRICS_TOKEN"),
  /** Tracing is on when this is set (see `Platform/Tracing.ts`). */
  otlpTracesEndpoint,
  otelServiceName: nonEmptyOptionalString("OTEL_SERVICE_NAME"),
  otelResourceAttributes: resourceAttributes,
  otelTracesSampler: traceSampler,
  /** The ratio of the `traceidratio` samplers; the specification's default is 1. */
  otelTracesSamplerArg: ratioIn("OTEL_TRACES_SAMPLER_ARG", 1),
  /** The share of redirects traced while tracing is on: 0 (the default) traces none. */
  redirectTraceRatio: ratioIn("REDIRECT_TRACE_RATIO", 0),
  /** Webhooks (extension): how often each instance looks for due deliveries and link events. */
  webhookPollMillis: integerIn("WEBHOOK_POLL_MILLIS", 1000, 50, 60_000, "must be from 50 to 60000"),
  /** At most one link.clicked delivery per webhook this often. */
  webhookClickIntervalSeconds: integerIn("WEBHOOK_CLICK_INTERVAL_SECONDS", 5, 1, 3600, "must be from 1 to 3600"),
  /** A delivery's first retry waits this long, each next one twice as long (at most an hour). */
  webhookRetrySeconds: integerIn("WEBHOOK_RETRY_SECONDS", 10, 1, 3600, "must be from 1 to 3600"),
  /** A delivery not answered with 2xx by then is given up. */
  webhookRetryForSeconds: integerIn("WEBHOOK_RETRY_FOR_SECONDS", 86_400, 1, 604_800, "must be from 1 to 604800"),
  /** The receiver's answer must come within this. */
  webhookTimeoutSeconds: integerIn("WEBHOOK_TIMEOUT_SECONDS", 10, 1, 60, "must be from 1 to 60")
})

export type AppConfigShape = Config.Config.Success<typeof appConfig>

/**
 * The process environment, where a variable set to the empty string (`DATABASE_URL=` in an env or
 * compose file) counts as unset and so takes its default.
 */
export const environment = (env: NodeJS.ProcessEnv = process.env) =>
  ConfigProvider.fromMap(new Map(Object.entries(env).flatMap(([name, value]) => (value === undefined || value === "" ? [] : [[name, value]]))))

export class AppConfig extends Context.Tag("AppConfig")<AppConfig, AppConfigShape>() {
  static readonly layer = Layer.effect(AppConfig, Effect.suspend(() => Effect.withConfigProvider(appConfig, environment())))
  /** A layer from explicit values, for tests and embedders: missing keys take their defaults. */
  static readonly layerFromMap = (values: Record<string, string>) =>
    Layer.effect(AppConfig, Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(values)))))
}
