import { Effect } from "effect"
import type { ImportCounts, ImportEvent, ImportSummary } from "../Import/Importer.ts"
import type { Outcome } from "./Outcome.ts"

const BAR_WIDTH = 30

const number = (value: number) => value.toLocaleString("en-US")

const tally = (counts: ImportCounts) =>
  `${number(counts.imported)} imported, ${number(counts.conflicts)} conflicts, ${number(counts.invalid)} invalid, ${number(counts.skipped)} skipped`

const bar = (counts: ImportCounts) => {
  const share = counts.rows === 0 ? 1 : counts.done / counts.rows
  const filled = Math.round(share * BAR_WIDTH)
  return `[${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${Math.floor(share * 100)}% ${number(counts.done)}/${number(counts.rows)} rows: ${tally(counts)}`
}

const eventJson = (event: ImportEvent) => {
  switch (event._tag) {
    case "Conflict":
      return { event: "conflict", [event.unit]: event.line, alias: event.alias }
    case "Invalid":
      return { event: "invalid", [event.unit]: event.line, reason: event.reason }
    case "Progress":
      return { event: "progress", ...event.counts }
  }
}

/**
 * How `cli import` shows its events: with `--json` one JSON object a line on stdout (each conflict,
 * each invalid row, a progress line per batch; the summary is the command's answer), else conflicts
 * and invalid rows as lines on stdout and, on a terminal, a progress bar on stderr.
 */
export const importReporter = (json: boolean, stdout: NodeJS.WriteStream, stderr: NodeJS.WriteStream) => {
  const showBar = !json && stderr.isTTY === true
  let barShown = false
  const clearBar = () => {
    if (barShown) stderr.write("\r\x1b[K")
    barShown = false
  }
  const onEvent = (event: ImportEvent) =>
    Effect.sync(() => {
      if (json) {
        stdout.write(`${JSON.stringify(eventJson(event))}\n`)
        return
      }
      if (event._tag === "Progress") {
        if (!showBar) return
        stderr.write(`\r${bar(event.counts)}`)
        barShown = true
        return
      }
      clearBar()
      stdout.write(
        event._tag === "Conflict"
          ? `${event.unit} ${event.line}: conflict: the alias "${event.alias}" is taken on the domain (left as it is)\n`
          : `${event.unit} ${event.line}: invalid: ${event.reason}\n`
      )
    })
  const done = Effect.sync(() => {
    if (barShown) stderr.write("\n")
    barShown = false
  })
  return { onEvent, done }
}

/** The summary as the command's answer. */
export const importOutcome = (summary: ImportSummary): Outcome => {
  const what = summary.dry_run ? "dry run, nothing written" : `into domain ${summary.domain_id} as user ${summary.user_id}`
  const text =
    summary.finished_before !== null
      ? `this file was imported into domain ${summary.domain_id} on ${new Date(summary.finished_before * 1000).toISOString()}: nothing to do (${number(summary.rows)} rows skipped)`
      : `${summary.dry_run ? "would import" : "imported"} ${number(summary.rows)} rows from ${summary.source} (${what}): ${tally(summary)}`
  return { json: { event: "summary", ...summary }, text }
}
