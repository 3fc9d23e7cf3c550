import { describe, expect, it } from "@effect/vitest"
import { ConfigError, Effect, Either, LogLevel, Option } from "effect"
import { appConfig, environment } from "../src/Config.ts"

const read = (env: Record<string, string>) => Effect.either(Effect.withConfigProvider(appConfig, environment(env)))

const problem = (result: Either.Either<unknown, ConfigError.ConfigError>) =>
  Either.match(result, { onLeft: (error) => String(error), onRight: () => "" })

describe("configuration (environment variables)", () => {
  it.effect("LOG_LEVEL takes Effect's names and the usual aliases, in any case", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
        ["warn", LogLevel.Warning],
        ["WARNING", LogLevel.Warning],
        ["err", LogLevel.Error],
        ["error", LogLevel.Error],
        ["Info", LogLevel.Info],
        ["debug", LogLevel.Debug],
        ["trace", LogLevel.Trace],
        ["fatal", LogLevel.Fatal],
        ["critical", LogLevel.Fatal],
        ["silent", LogLevel.None],
        ["off", LogLevel.None],
        ["all", LogLevel.All]
      ]
      for (const [raw, level] of cases) {
        const config = yield* read({ LOG_LEVEL: raw })
        expect(Either.map(config, (c) => c.logLevel), raw).toEqual(Either.right(level))
      }
    })
  )

  it.effect("an unknown LOG_LEVEL is refused naming the variable and the accepted values", () =>
    Effect.gen(function* () {
      const message = problem(yield* read({ LOG_LEVEL: "loud" }))
      expect(message).toContain("LOG_LEVEL")
      expect(message).toContain("warn")
      expect(message).toContain("\"loud\"")
    })
  )

  it.effect("a variable set to the empty string counts as unset and takes its default", () =>
    Effect.gen(function* () {
      const config = yield* read({
        DATABASE_URL: "",
        REDIS_URL: "",
        SMTP_URL: "",
        TOKEN_SECRET: "",
        PORT: "",
        LOG_LEVEL: "",
        SHUTDOWN_DRAIN_SECONDS: "",
        TRUST_PROXY: ""
      })
      expect(Either.isRight(config), problem(config)).toBe(true)
      if (Either.isLeft(config)) return
      expect(Option.isNone(config.right.databaseUrl)).toBe(true)
      expect(Option.isNone(config.right.redisUrl)).toBe(true)
      expect(Option.isNone(config.right.smtpUrl)).toBe(true)
      expect(Option.isNone(config.right.tokenSecret)).toBe(true)
      expect(config.right.port).toBe(8080)
      expect(config.right.logLevel).toBe(LogLevel.Info)
      expect(config.right.shutdownDrainSeconds).toBe(5)
    })
  )

  it.effect("SHUTDOWN_DRAIN_SECONDS takes 0 to 600", () =>
    Effect.gen(function* () {
      expect(Either.map(yield* read({ SHUTDOWN_DRAIN_SECONDS: "0" }), (c) => c.shutdownDrainSeconds)).toEqual(Either.right(0))
      expect(problem(yield* read({ SHUTDOWN_DRAIN_SECONDS: "-1" }))).toContain("SHUTDOWN_DRAIN_SECONDS")
      expect(problem(yield* read({ SHUTDOWN_DRAIN_SECONDS: "601" }))).toContain("must be from 0 to 600")
    })
  )

  it.effect("DEFAULT_URL_404 and DEFAULT_HOMEPAGE take full http(s) URLs, normalised, and are refused otherwise", () =>
    Effect.gen(function* () {
      const config = yield* read({ DEFAULT_URL_404: "https://Help.example/404", DEFAULT_HOMEPAGE: " http://home.example " })
      expect(Either.map(config, (c) => [c.defaultUrl404, c.defaultHomepage])).toEqual(
        Either.right([Option.some("https://help.example/404"), Option.some("http://home.example/")])
      )
      expect(Either.map(yield* read({}), (c) => Option.isNone(c.defaultUrl404) && Option.isNone(c.defaultHomepage))).toEqual(Either.right(true))
      expect(problem(yield* read({ DEFAULT_URL_404: "help.example/404" }))).toContain("DEFAULT_URL_404")
      expect(problem(yield* read({ DEFAULT_HOMEPAGE: "ftp://home.example" }))).toContain("must be a full http or https URL")
    })
  )

  it.effect("tracing is on with an OTLP endpoint (the traces one as given, the general one plus /v1/traces), its OTEL_ variables checked", () =>
    Effect.gen(function* () {
      const endpoint = (env: Record<string, string>) => Effect.map(read(env), Either.map((c) => c.otlpTracesEndpoint))
      expect(yield* endpoint({})).toEqual(Either.right(Option.none()))
      expect(yield* endpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toEqual(Either.right(Option.some("http://collector:4318/v1/traces")))
      expect(
        yield* endpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/in" })
      ).toEqual(Either.right(Option.some("https://traces.example/in")))
      expect(problem(yield* read({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }))).toContain("OTEL_EXPORTER_OTLP_ENDPOINT")
      expect(problem(yield* read({ OTEL_TRACES_SAMPLER: "sometimes" }))).toContain("OTEL_TRACES_SAMPLER")
      expect(problem(yield* read({ OTEL_TRACES_SAMPLER_ARG: "1.5" }))).toContain("must be a number from 0 to 1")
      expect(problem(yield* read({ REDIRECT_TRACE_RATIO: "-0.1" }))).toContain("REDIRECT_TRACE_RATIO")
      expect(problem(yield* read({ OTEL_RESOURCE_ATTRIBUTES: "team=links,broken" }))).toContain("OTEL_RESOURCE_ATTRIBUTES")
      const config = yield* read({ OTEL_TRACES_SAMPLER: "ParentBased_TraceIdRatio", OTEL_TRACES_SAMPLER_ARG: "0.25", OTEL_RESOURCE_ATTRIBUTES: "team=links, note=a%2Cb" })
      expect(Either.map(config, (c) => [c.otelTracesSampler, c.otelTracesSamplerArg, c.otelResourceAttributes, c.redirectTraceRatio])).toEqual(
        Either.right(["parentbased_traceidratio", 0.25, { team: "links", note: "a,b" }, 0])
      )
    })
  )
})
