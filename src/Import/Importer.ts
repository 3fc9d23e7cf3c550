import { Chunk, Clock, Effect, Either, Option, Stream } from "effect"
import { basename } from "node:path"
import { AdminError } from "../Accounts/AdminError.ts"
import { generateAlias } from "../Links/Alias.ts"
import { type ImportFile, openImportFile } from "./ImportFile.ts"
import { type BatchLink, ImportRepo, type ImportRun, type ImportTarget } from "./ImportRepo.ts"
import { type ImportLink, readImportRow } from "./ImportRows.ts"
import type { ImportSource } from "./SourceNames.ts"
import { type SourceRow, UnusableFile } from "./Sources.ts"

/** Generated aliases tried per link before giving up, as E4 does. */
const ALIAS_ATTEMPTS = 8

export interface ImportOptions {
  readonly path: string
  readonly source: ImportSource
  readonly domainId: number
  readonly userId: number | undefined
  readonly dryRun: boolean
  readonly batchSize: number
}

export interface ImportCounts {
  readonly rows: number
  /** Rows done so far, those skipped included. */
  readonly done: number
  readonly imported: number
  readonly conflicts: number
  readonly invalid: number
  /** Rows an earlier run of the same file committed. */
  readonly skipped: number
}

/** What an import tells as it goes; `unit` is "line" (CSV) or "entry" (JSON). */
export type ImportEvent =
  | { readonly _tag: "Conflict"; readonly unit: string; readonly line: number; readonly alias: string }
  | { readonly _tag: "Invalid"; readonly unit: string; readonly line: number; readonly reason: string }
  | { readonly _tag: "Progress"; readonly counts: ImportCounts }

export interface ImportSummary extends ImportCounts {
  readonly domain_id: number
  readonly user_id: number
  readonly source: ImportSource
  readonly dry_run: boolean
  /** When an earlier run finished this same file (Unix seconds): nothing was done. */
  readonly finished_before: number | null
}

const lineOf = (event: ImportEvent) => (event._tag === "Progress" ? 0 : event.line)

const unusable = (failure: unknown) =>
  new AdminError({
    message: failure instanceof UnusableFile ? failure.message : `the file cannot be read: ${failure instanceof Error ? failure.message : String(failure)}`
  })

/** Links that keep their source's alias, and those that get one generated. */
interface Planned {
  readonly given: ReadonlyArray<ImportLink>
  readonly generated: ReadonlyArray<ImportLink>
  /** Later rows of the batch repeating an alias of an earlier one. */
  readonly repeated: ReadonlyArray<ImportLink>
}

const plan = (links: ReadonlyArray<ImportLink>): Planned => {
  const seen = new Set<string>()
  const given: Array<ImportLink> = []
  const generated: Array<ImportLink> = []
  const repeated: Array<ImportLink> = []
  for (const link of links) {
    if (link.alias === undefined) generated.push(link)
    else if (seen.has(link.alias.toLowerCase())) repeated.push(link)
    else {
      seen.add(link.alias.toLowerCase())
      given.push(link)
    }
  }
  return { given, generated, repeated }
}

/**
 * `cli import`: a file exported by another shortener, checked whole first, then read as a stream in
 * batches of `batchSize` rows, each committed in one transaction with its run's progress, so a run
 * stopped half way continues where it stopped. Rows breaking the link rules are reported and left
 * out; an alias the domain holds is a conflict, reported and left as it is.
 */
export class Importer extends Effect.Service<Importer>()("Importer", {
  effect: Effect.gen(function* () {
    const repo = yield* ImportRepo

    /** The batch's links written: the links inserted, and the conflicts. */
    const write = (target: ImportTarget, planned: Planned) =>
      Effect.gen(function* () {
        const adding = planned.given.length + planned.generated.length
        yield* repo.withinQuota(target, adding)
        const names = new Map<string, string>()
        for (const link of [...planned.given, ...planned.generated]) for (const tag of link.tags) if (!names.has(tag.toLowerCase())) names.set(tag.toLowerCase(), tag)
        const tags = yield* repo.tagIds(target, [...names.values()])
        const inserted = new Map<ImportLink, number>()
        const asBatch = (link: ImportLink, alias: string): BatchLink => ({ ...link, alias })
        const ids = yield* repo.insertLinks(target, planned.given.map((link) => asBatch(link, link.alias ?? "")))
        const conflicts: Array<ImportLink> = [...planned.repeated]
        for (const link of planned.given) {
          const id = ids.get((link.alias ?? "").toLowerCase())
          if (id === undefined) conflicts.push(link)
          else inserted.set(link, id)
        }
        let pending = planned.generated
        for (let attempt = 0; attempt < ALIAS_ATTEMPTS && pending.length > 0; attempt++) {
          const drafts = pending.map((link) => asBatch(link, generateAlias()))
          const made = yield* repo.insertLinks(target, drafts)
          const missed: Array<ImportLink> = []
          drafts.forEach((draft, n) => {
            const id = made.get(draft.alias.toLowerCase())
            if (id === undefined) missed.push(pending[n]!)
            else inserted.set(pending[n]!, id)
          })
          pending = missed
        }
        if (pending.length > 0) return yield* new AdminError({ message: "could not find free aliases for generated links" })
        yield* repo.attachTags(
          [...inserted].flatMap(([link, id]) =>
            link.tags.flatMap((tag) => {
              const tagId = tags.get(tag.toLowerCase())
              return tagId === undefined ? [] : [[id, tagId] as const]
            })
          )
        )
        return { imported: inserted.size, conflicts }
      })

    /** A dry run's view of a batch: which aliases the domain holds, or the file gave before. */
    const preview = (target: ImportTarget, planned: Planned, seen: Set<string>) =>
      Effect.map(repo.takenAliases(target.domainId, planned.given.map((link) => (link.alias ?? "").toLowerCase())), (taken) => {
        const conflicts: Array<ImportLink> = [...planned.repeated]
        let imported = planned.generated.length
        for (const link of planned.given) {
          const key = (link.alias ?? "").toLowerCase()
          if (taken.has(key) || seen.has(key)) conflicts.push(link)
          else {
            seen.add(key)
            imported++
          }
        }
        return { imported, conflicts }
      })

    const run = <R>(options: ImportOptions, onEvent: (event: ImportEvent) => Effect.Effect<void, never, R>) =>
      Effect.gen(function* () {
        const target = yield* repo.target(options.domainId, options.userId)
        const file: ImportFile = yield* Effect.tryPromise({ try: () => openImportFile(options.path, options.source), catch: unusable })
        const before = yield* repo.findRun(options.domainId, options.source, file.sha256)
        const summary = (counts: ImportCounts, finishedBefore: number | null): ImportSummary => ({
          ...counts,
          domain_id: target.domainId,
          user_id: target.userId,
          source: options.source,
          dry_run: options.dryRun,
          finished_before: finishedBefore
        })
        if (Option.isSome(before) && before.value.finished !== null) {
          const counts = { rows: file.rows, done: file.rows, imported: 0, conflicts: 0, invalid: 0, skipped: file.rows }
          return summary(counts, before.value.finished)
        }
        const run: Option.Option<ImportRun> = options.dryRun
          ? Option.none()
          : Option.some(yield* repo.beginRun(target, options.source, file.sha256, basename(options.path)))
        const skip = Option.match(options.dryRun ? before : run, { onNone: () => 0, onSome: (found) => found.rows_done })
        let counts: ImportCounts = { rows: file.rows, done: skip, imported: 0, conflicts: 0, invalid: 0, skipped: skip }
        const seen = new Set<string>()
        const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)

        const batch = (rows: ReadonlyArray<SourceRow>) =>
          Effect.gen(function* () {
            const links: Array<ImportLink> = []
            const refused: Array<ImportEvent> = []
            for (const row of rows) {
              const read = readImportRow(row, now)
              if (Either.isRight(read)) links.push(read.right)
              else refused.push({ _tag: "Invalid", unit: file.unit, line: row.line, reason: read.left })
            }
            const invalid = refused.length
            const planned = plan(links)
            const result = yield* Option.match(run, {
              onNone: () => preview(target, planned, seen),
              onSome: (started) =>
                repo.commitBatch(started.id, counts.done, write(target, planned), (written) => ({
                  rows: rows.length,
                  imported: written.imported,
                  conflicts: written.conflicts.length,
                  invalid
                }))
            })
            // Told once the batch is committed (a batch rolled back is told by the run that redoes it), in line order.
            const conflicts = result.conflicts.map((link): ImportEvent => ({ _tag: "Conflict", unit: file.unit, line: link.line, alias: link.alias ?? "" }))
            const told = [...refused, ...conflicts].sort((a, b) => lineOf(a) - lineOf(b))
            yield* Effect.forEach(told, onEvent, { discard: true })
            counts = {
              ...counts,
              done: counts.done + rows.length,
              imported: counts.imported + result.imported,
              conflicts: counts.conflicts + result.conflicts.length,
              invalid: counts.invalid + invalid
            }
            yield* onEvent({ _tag: "Progress", counts })
          })

        yield* Stream.fromAsyncIterable(file.read(), unusable).pipe(
          Stream.drop(skip),
          Stream.grouped(options.batchSize),
          Stream.runForEach((rows) => batch(Chunk.toReadonlyArray(rows)))
        )
        if (Option.isSome(run)) yield* repo.finishRun(run.value.id)
        return summary(counts, null)
      })

    return { run } as const
  }),
  dependencies: [ImportRepo.Default]
}) {}
