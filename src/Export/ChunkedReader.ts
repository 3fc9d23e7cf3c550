import { Effect, Option, Stream } from "effect"

/** Rows a chunked export holds at once: one chunk read from the database, and its text. */
export const CHUNK_ROWS = 5000

/**
 * Every row of an ordered read, in chunks of at most `size` rows: each chunk is the rows after the
 * last one of the previous chunk (keyset pagination: `read(after, size)` answers, in order, at most
 * `size` rows whose keys come after `after`, from the first row when it is none). A chunk is read
 * only when the stream is pulled, and no statement or transaction stays open between chunks, so
 * the rows held at once are one chunk's whatever the export's size; the stream ends after a chunk
 * shorter than `size`. An empty chunk is never emitted.
 */
export const chunked = <Row, Key, E, R>(
  size: number,
  read: (after: Option.Option<Key>, size: number) => Effect.Effect<ReadonlyArray<Row>, E, R>,
  keyOf: (row: Row) => Key
): Stream.Stream<ReadonlyArray<Row>, E, R> =>
  Stream.paginateEffect(Option.none<Key>(), (after) =>
    Effect.map(read(after, size), (rows) => {
      const last = rows.at(-1)
      const next = rows.length < size || last === undefined ? Option.none() : Option.some(Option.some(keyOf(last)))
      return [rows, next] as const
    })
  ).pipe(Stream.filter((rows) => rows.length > 0))
