import { Effect, type Option, Stream } from "effect"
import { LinkNotFound } from "../Links/LinkErrors.ts"
import { CHUNK_ROWS, chunked } from "./ChunkedReader.ts"
import { type Cell, csvRecord } from "./Csv.ts"
import { exportWindow } from "./ExportWindow.ts"
import { type ClickExportRow, type ClickKey, ExportRepo, type LinkExportRow } from "./ExportRepo.ts"

const LINK_COLUMNS = [
  "id", "alias", "short_link", "url", "redirect_url", "notes", "tags", "status", "redirect_type", "user_id",
  "created", "modified", "archive_on", "delete_on", "clicks", "last_clicked"
] as const

const linkCells = (row: LinkExportRow): ReadonlyArray<Cell> => [
  row.id, row.alias, row.short_link, row.url, row.redirect_url, row.notes, row.tags, row.status, row.redirect_type, row.user_id,
  row.created, row.modified, row.archive_on, row.delete_on, row.click_count, row.last_clicked
]

const CLICK_COLUMNS = [
  "engagement_id", "clicked_at", "unix", "link_id", "alias", "country", "region", "city", "device", "referrer", "user_agent", "qr", "bot"
] as const

const clickCells = (row: ClickExportRow): ReadonlyArray<Cell> => [
  row.engagement_id, row.clicked_at, row.unix, row.link_id, row.alias, row.country, row.region, row.city, row.device, row.referrer,
  row.user_agent, row.qr, row.bot
]

const encoder = new TextEncoder()

/** An export: the file's name, and its bytes as they are read. */
export interface CsvFile<E, R> {
  readonly name: string
  readonly body: Stream.Stream<Uint8Array, E, R>
}

/** A CSV file: its header record, then each chunk of rows as one piece of bytes. */
const csvFile = <Row, E, R>(
  name: string,
  columns: ReadonlyArray<string>,
  cells: (row: Row) => ReadonlyArray<Cell>,
  chunks: Stream.Stream<ReadonlyArray<Row>, E, R>
): CsvFile<E, R> => ({
  name,
  body: Stream.concat(
    Stream.succeed(encoder.encode(csvRecord(columns))),
    Stream.map(chunks, (rows) => encoder.encode(rows.map((row) => csvRecord(cells(row))).join("")))
  )
})

/** What a clicks export asks for: its window (both bounds required) and, optionally, one link. */
export interface ClicksRequest {
  readonly from_unix?: number | undefined
  readonly to_unix?: number | undefined
  readonly link_id?: number | undefined
}

/**
 * The exports as CSV files (RFC 4180, UTF-8, CRLF; `Csv.ts`), streamed chunk by chunk from the
 * database: the same files for the API and the admin CLI, which decide who may ask.
 */
export class ExportCsv extends Effect.Service<ExportCsv>()("ExportCsv", {
  effect: Effect.gen(function* () {
    const repo = yield* ExportRepo

    /** The domain's links that are not deleted (archived ones too), by id. */
    const links = (domainId: number) =>
      csvFile(
        `links-domain-${domainId}.csv`,
        LINK_COLUMNS,
        linkCells,
        chunked(CHUNK_ROWS, (after: Option.Option<number>, size) => repo.links(domainId, after, size), (row) => row.id)
      )

    /**
     * The domain's clicks in the window, bots included and flagged, oldest first, deleted links'
     * too; with `link_id`, those of one link of the domain that is not deleted (else 10150).
     */
    const clicks = (domainId: number, request: ClicksRequest) =>
      Effect.gen(function* () {
        const window = yield* exportWindow(request.from_unix, request.to_unix)
        const linkId = request.link_id
        if (linkId !== undefined && !(yield* repo.linkOfDomain(domainId, linkId))) return yield* LinkNotFound.of()
        const scope = { ...window, domainId, linkId }
        return csvFile(
          `clicks-domain-${domainId}-${window.from}-${window.to}.csv`,
          CLICK_COLUMNS,
          clickCells,
          chunked(
            CHUNK_ROWS,
            (after: Option.Option<ClickKey>, size) => repo.clicks(scope, after, size),
            (row): ClickKey => ({ at: row.at_key, id: row.engagement_id })
          )
        )
      })

    return { links, clicks, domainExists: repo.domainExists } as const
  }),
  dependencies: [ExportRepo.Default]
}) {}
