import { Inspectable, Logger } from "effect"

/** An error as one line: its name and message, without the stack (a cause still carries it). */
const errorText = (error: Error) => `${error.name}: ${error.message}`

const asText = (part: unknown): string =>
  typeof part === "string" ? part : part instanceof Error ? errorText(part) : Inspectable.stringifyCircular(part)

const asDetail = (part: unknown): unknown => (part instanceof Error ? errorText(part) : part)

/**
 * Effect's JSON lines, except that `message` is always a string: `Effect.log("text", value)` gives
 * `{message: "text", details: [value]}` instead of a message that is an array of both.
 */
export const jsonLogger = Logger.map(Logger.structuredLogger, (log) => {
  const parts: ReadonlyArray<unknown> = Array.isArray(log.message) ? log.message : [log.message]
  const texts = parts.filter((part): part is string => typeof part === "string")
  const others = parts.filter((part) => typeof part !== "string")
  const message = texts.length > 0 ? texts.join(" ") : others.length > 0 ? asText(others.shift()) : ""
  return Inspectable.stringifyCircular({
    message,
    logLevel: log.logLevel,
    timestamp: log.timestamp,
    cause: log.cause,
    ...(others.length === 0 ? {} : { details: others.map(asDetail) }),
    annotations: log.annotations,
    spans: log.spans,
    fiberId: log.fiberId
  })
})

/** The service's logger: one JSON object per line on stdout. */
export const JsonLoggerLive = Logger.replace(Logger.defaultLogger, Logger.withConsoleLog(jsonLogger))
