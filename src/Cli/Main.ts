import { runMain } from "@effect/platform-node/NodeRuntime"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, ConfigError, Effect, Exit, Layer, Logger, LogLevel, type ParseResult } from "effect"
import { parseInvocation } from "./Arguments.ts"
import type { Command, UsageError } from "./Command.ts"
import type { Outcome } from "./Outcome.ts"
import { commandUsage, USAGE } from "./Usage.ts"
import { version } from "./Version.ts"
import { AppConfig } from "../Config.ts"
import type { ApiError } from "../Platform/ApiError.ts"
import type { AdminError } from "../Accounts/AdminError.ts"

type Failure =
  | UsageError
  | AdminError
  | SqlError
  | ApiError
  | ParseResult.ParseError
  | Cause.NoSuchElementException
  | ConfigError.ConfigError

const EXIT_REFUSED = 1
const EXIT_USAGE = 2

const describe = (error: Failure): { readonly message: string; readonly exitCode: number } => {
  if (ConfigError.isConfigError(error)) return { message: `configuration error: ${String(error)}`, exitCode: EXIT_USAGE }
  switch (error._tag) {
    case "UsageError":
      return { message: `${error.message} (see --help)`, exitCode: EXIT_USAGE }
    case "AdminError":
    case "ApiError":
      return { message: error.message, exitCode: EXIT_REFUSED }
    case "SqlError":
      return {
        message: error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message,
        exitCode: EXIT_REFUSED
      }
    case "ParseError":
      return { message: `unexpected data in the database: ${error.message}`, exitCode: EXIT_REFUSED }
    case "NoSuchElementException":
      return { message: "the database answered no row", exitCode: EXIT_REFUSED }
  }
}

const write = (stream: NodeJS.WriteStream, text: string) =>
  Effect.async<void>((resume) => {
    stream.write(`${text}\n`, () => resume(Effect.void))
  })

/** Logs are for operators: warnings and worse, on stderr, so that stdout holds only the answer. */
const QuietLoggerLive = Layer.merge(
  Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)),
  Logger.minimumLogLevel(LogLevel.Warning)
)

/** Every command and the services they build (the build's code cache), loaded otherwise only when one runs. */
export const loadCommands = () => import("./Execute.ts").then(({ loadAll }) => loadAll())

const run = (command: Command) => {
  if (command._tag === "Help") {
    const usage = command.command === undefined ? USAGE : commandUsage(command.command)
    return Effect.succeed<Outcome>({ json: { usage }, text: usage })
  }
  if (command._tag === "Version") return Effect.sync((): Outcome => ({ json: { version: version() }, text: version() }))
  return Effect.flatMap(
    Effect.promise(() => import("./Execute.ts")),
    ({ execute }) => execute(command)
  )
}

/** Runs the command line and answers the process exit code. */
const main = (argv: ReadonlyArray<string>) => {
  const { json, command } = parseInvocation(argv)
  const succeed = (outcome: Outcome) =>
    outcome.printed === true ? Effect.void : write(process.stdout, json ? JSON.stringify(outcome.json) : outcome.text)
  const fail = (message: string) =>
    Effect.zipRight(
      json ? write(process.stdout, JSON.stringify({ error: message })) : Effect.void,
      write(process.stderr, `error: ${message}`)
    )
  return command.pipe(
    Effect.flatMap(run),
    Effect.provide(AppConfig.layer),
    Effect.matchEffect({
      onSuccess: (outcome) => Effect.as(succeed(outcome), 0),
      onFailure: (error) => {
        const { message, exitCode } = describe(error)
        return Effect.as(fail(message), exitCode)
      }
    }),
    Effect.catchAllDefect((defect) => Effect.as(fail(`internal error: ${Cause.pretty(Cause.die(defect))}`), EXIT_REFUSED)),
    Effect.provide(QuietLoggerLive)
  )
}

/** Runs a command of the admin CLI (README "Admin CLI") to its end, then exits with its code. */
export const runCli = (argv: ReadonlyArray<string>) =>
  runMain(main(argv), {
    disableErrorReporting: true,
    disablePrettyLogger: true,
    teardown: (exit, onExit) => {
      if (Exit.isSuccess(exit)) onExit(typeof exit.value === "number" ? exit.value : 0)
      else onExit(Cause.isInterruptedOnly(exit.cause) ? 130 : EXIT_REFUSED)
    }
  })
