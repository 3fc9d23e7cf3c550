import { Logger } from "effect"

/**
 * A logger layer that keeps every line a test server logs, as its message followed by its
 * annotations in JSON, in `lines`.
 */
export const captureLogs = () => {
  const lines: Array<string> = []
  const layer = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ message, annotations }) => void lines.push(`${String(message)} ${JSON.stringify(Object.fromEntries(annotations))}`))
  )
  return { lines, layer }
}
