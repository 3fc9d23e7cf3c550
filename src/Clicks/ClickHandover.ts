import { randomUUID } from "node:crypto"

/** A click as the redirect handler sees it; enriched later, on the click writer's thread. */
export interface RawClick {
  /** Unix milliseconds. */
  readonly at: number
  readonly linkId: number
  readonly domainId: number
  readonly ip: string
  readonly userAgent: string | undefined
  readonly referer: string | undefined
  readonly qr: boolean
  /** The smart-link destination served (`destinations` id); null or absent for the link's own URL. */
  readonly destinationId?: number | null
}

/**
 * Clicks handed from the redirect thread to the click writer in one message, encoded in one byte
 * array (`ClickEncoder`). The redirect thread keeps the batch until the writer reports it written:
 * kept as bytes outside the JavaScript heap, a second of clicks costs its garbage collector nothing,
 * where an object and three strings per click would be copied by every scavenge and then promoted.
 */
export interface HandedClicks {
  /** Increasing per redirect thread: the writer reports the highest it has written or spilled. */
  readonly seq: number
  /** Random per batch: with a click's time and place in the batch it makes the click's id (`clickId`). */
  readonly nonce: string
  /** Handed over before to a writer that stopped before reporting it: it may be written already. */
  readonly again: boolean
  readonly count: number
  readonly bytes: Uint8Array
}

/** Most clicks in one handed batch: a click's place in it is six hex digits of its id. */
export const MAX_HANDED = 0x1000000

/** Longer user agents are cut before parsing and storing: real ones are far shorter, and the parsers' regexes stay cheap. */
export const MAX_USER_AGENT = 512
/** Longer Referers are cut before parsing; the host is at the start. */
export const MAX_REFERER = 2048
const MAX_IP = 64
/** The length written for a header the request did not have. */
const ABSENT = 0xffff
/** at, link id and domain id (float64 each), the QR flag (one byte), the destination id (uint32, 0 for none). */
const FIXED_BYTES = 29
const INITIAL_BYTES = 64 * 1024
/** Above this, the buffer is given back after a hand-over (a burst grew it). */
const KEPT_BYTES = 1024 * 1024

/** The first `limit` UTF-16 units of `text`, never half a surrogate pair. */
const cut = (text: string, limit: number) => {
  if (text.length <= limit) return text
  const code = text.charCodeAt(limit - 1)
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit)
}

/**
 * Clicks written into one growing byte buffer as they come (no object kept per click), taken as a
 * `HandedClicks` batch. Per click: the fixed fields, then the address, user agent and Referer, each a
 * 16-bit byte length (`ABSENT` for a missing header) and its UTF-8 bytes.
 */
export class ClickEncoder {
  private buffer = Buffer.allocUnsafeSlow(INITIAL_BYTES)
  private used = 0
  private clicks = 0

  get count() {
    return this.clicks
  }

  add(click: RawClick): void {
    const ip = cut(click.ip, MAX_IP)
    const userAgent = click.userAgent === undefined ? undefined : cut(click.userAgent, MAX_USER_AGENT)
    const referer = click.referer === undefined ? undefined : cut(click.referer, MAX_REFERER)
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const most = FIXED_BYTES + 6 + 3 * (ip.length + (userAgent?.length ?? 0) + (referer?.length ?? 0))
    if (this.used + most > this.buffer.length) this.grow(this.used + most)
    const buffer = this.buffer
    let at = buffer.writeDoubleLE(click.at, this.used)
    at = buffer.writeDoubleLE(click.linkId, at)
    at = buffer.writeDoubleLE(click.domainId, at)
    at = buffer.writeUInt8(click.qr ? 1 : 0, at)
    at = buffer.writeUInt32LE(click.destinationId ?? 0, at)
    at = this.text(ip, at)
    at = this.text(userAgent, at)
    this.used = this.text(referer, at)
    this.clicks++
  }

  /** The clicks added since the last take, as batch `seq`. */
  take(seq: number): HandedClicks {
    const bytes = new Uint8Array(this.used)
    bytes.set(this.buffer.subarray(0, this.used))
    const count = this.clicks
    this.used = 0
    this.clicks = 0
    if (this.buffer.length > KEPT_BYTES) this.buffer = Buffer.allocUnsafeSlow(INITIAL_BYTES)
    // The UUID's variant and 50 random bits, without its version digit (`clickId` puts 7 there).
    return { seq, nonce: randomUUID().slice(15, 30), again: false, count, bytes }
  }

  private text(value: string | undefined, at: number): number {
    if (value === undefined) return this.buffer.writeUInt16LE(ABSENT, at)
    const length = this.buffer.write(value, at + 2, "utf8")
    this.buffer.writeUInt16LE(length, at)
    return at + 2 + length
  }

  private grow(needed: number) {
    const grown = Buffer.allocUnsafeSlow(Math.max(needed, this.buffer.length * 2))
    this.buffer.copy(grown, 0, 0, this.used)
    this.buffer = grown
  }
}

/** `clicks` as batch `seq`. */
export const handOver = (seq: number, clicks: ReadonlyArray<RawClick>): HandedClicks => {
  const encoder = new ClickEncoder()
  for (const click of clicks) encoder.add(click)
  return encoder.take(seq)
}

/** The clicks of a batch, read back on the writer's thread. */
export const unpack = (batch: HandedClicks): Array<RawClick> => {
  const buffer = Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength)
  const clicks = new Array<RawClick>(batch.count)
  let at = 0
  const text = () => {
    const length = buffer.readUInt16LE(at)
    at += 2
    if (length === ABSENT) return undefined
    at += length
    return buffer.toString("utf8", at - length, at)
  }
  for (let i = 0; i < batch.count; i++) {
    const time = buffer.readDoubleLE(at)
    const linkId = buffer.readDoubleLE(at + 8)
    const domainId = buffer.readDoubleLE(at + 16)
    const qr = buffer[at + 24] === 1
    const destination = buffer.readUInt32LE(at + 25)
    at += FIXED_BYTES
    const ip = text() ?? ""
    const userAgent = text()
    const referer = text()
    clicks[i] =
      destination === 0
        ? { at: time, linkId, domainId, ip, userAgent, referer, qr }
        : { at: time, linkId, domainId, ip, userAgent, referer, qr, destinationId: destination }
  }
  return clicks
}

/**
 * The id of click `index` of a batch, the same every time the batch is written: its first 48 bits are
 * the time in milliseconds (the layout of UUID version 7, so the primary key index grows at its end),
 * then the batch's random nonce and the click's place in it. A batch handed over again after its
 * writer stopped thus repeats its ids, and the statement that skips present ids counts it once.
 */
export const clickId = (at: number, nonce: string, index: number) => {
  const time = at.toString(16).padStart(12, "0")
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${nonce}${index.toString(16).padStart(6, "0")}`
}
