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
})
