import type pg from "pg"

/** Microseconds from the Unix epoch to PostgreSQL's (2000-01-01T00:00:00Z). */
export const POSTGRES_EPOCH_US = 946_684_800_000_000
const COPY_SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1")
const COPY_CHUNK = 1 << 20

/**
 * Rows in COPY's binary format, written into chunks of about 1 MiB: the server then parses no text
 * (times, ids and numbers are sent as it stores them).
 */
export class CopyWriter {
  readonly chunks: Array<Buffer> = []
  private buffer = Buffer.allocUnsafe(COPY_CHUNK)
  private at = 0

  constructor() {
    this.room(COPY_SIGNATURE.length + 8)
    this.at += COPY_SIGNATURE.copy(this.buffer, this.at)
    this.int32(0)
    this.int32(0)
  }

  /** At least `bytes` free in the current chunk. */
  room(bytes: number) {
    if (this.at + bytes <= this.buffer.length) return
    this.chunks.push(this.buffer.subarray(0, this.at))
    this.buffer = Buffer.allocUnsafe(Math.max(COPY_CHUNK, bytes))
    this.at = 0
  }
  int16(value: number) {
    this.at = this.buffer.writeInt16BE(value, this.at)
  }
  int32(value: number) {
    this.at = this.buffer.writeInt32BE(value, this.at)
  }
  /** An 8-byte integer below 2^53 in magnitude. */
  int64(value: number) {
    const high = Math.floor(value / 4_294_967_296)
    this.at = this.buffer.writeInt32BE(high, this.at)
    this.at = this.buffer.writeUInt32BE(value - high * 4_294_967_296, this.at)
  }
  /** A field of 8 bytes (bigint, timestamptz). */
  int64Field(value: number) {
    this.int32(8)
    this.int64(value)
  }
  int32Field(value: number) {
    this.int32(4)
    this.int32(value)
  }
  nullField() {
    this.int32(-1)
  }
  boolField(value: boolean) {
    this.int32(1)
    this.buffer[this.at++] = value ? 1 : 0
  }
  /** A field of the bytes in `hex` (hex digits only). */
  hexField(hex: string) {
    const length = hex.length >> 1
    this.int32(length)
    this.at += this.buffer.write(hex, this.at, length, "hex")
  }
  /** A text field, or NULL; `room` must allow for its UTF-8 bytes (3 per UTF-16 unit at most). */
  textField(value: string | null) {
    if (value === null) return this.int32(-1)
    const length = this.buffer.write(value, this.at + 4, "utf8")
    this.int32(length)
    this.at += length
  }
  end(): ReadonlyArray<Buffer> {
    this.room(2)
    this.int16(-1)
    this.chunks.push(this.buffer.subarray(0, this.at))
    return this.chunks
  }
}

/** What `pg` hands a query object once the server is ready for `COPY ... FROM STDIN` data. */
interface CopyInConnection {
  readonly sendCopyFromChunk: (chunk: Buffer) => void
  readonly endCopyFrom: () => void
}

/**
 * `COPY ... FROM STDIN` of `chunks` on a `pg` client, as the query object `pg` takes (the protocol's
 * messages, as pg-copy-streams sends them, without streams): the client runs it in its queue like any query.
 */
class CopyIn {
  constructor(
    readonly text: string,
    private readonly chunks: ReadonlyArray<Buffer>,
    private readonly resolve: () => void,
    private readonly reject: (failure: unknown) => void
  ) {}
  submit(connection: pg.Connection) {
    connection.query(this.text)
  }
  handleCopyInResponse(connection: CopyInConnection) {
    for (const chunk of this.chunks) connection.sendCopyFromChunk(chunk)
    connection.endCopyFrom()
  }
  handleCommandComplete() {}
  // pg forgets the query on an error: its ReadyForQuery does not come here then.
  handleError(failure: unknown) {
    this.reject(failure)
  }
  handleReadyForQuery() {
    this.resolve()
  }
}

export const copyIn = (client: pg.PoolClient, text: string, chunks: ReadonlyArray<Buffer>) =>
  new Promise<void>((resolve, reject) => {
    client.query(new CopyIn(text, chunks, resolve, reject))
  })
