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
}

/**
 * Clicks handed from the redirect thread to the click writer in one message, in columns: numbers in
 * typed arrays, strings in arrays. The redirect thread keeps the batch until the writer reports it
 * written, so the arrays are copied, not moved.
 */
export interface HandedClicks {
  /** Increasing per redirect thread: the writer reports the highest it has written or spilled. */
  readonly seq: number
  /** Random per batch: with a click's time and place in the batch it makes the click's id (`clickId`). */
  readonly nonce: string
  /** Handed over before to a writer that stopped before reporting it: it may be written already. */
  readonly again: boolean
  readonly at: Float64Array
  readonly linkId: Float64Array
  readonly domainId: Float64Array
  readonly qr: Uint8Array
  readonly ip: ReadonlyArray<string>
  readonly userAgent: ReadonlyArray<string | undefined>
  readonly referer: ReadonlyArray<string | undefined>
}

/** Most clicks in one handed batch: a click's place in it is six hex digits of its id. */
export const MAX_HANDED = 0x1000000

/** The columns of `clicks`, numbered `seq`. */
export const handOver = (seq: number, clicks: ReadonlyArray<RawClick>): HandedClicks => {
  const n = clicks.length
  const at = new Float64Array(n)
  const linkId = new Float64Array(n)
  const domainId = new Float64Array(n)
  const qr = new Uint8Array(n)
  const ip = new Array<string>(n)
  const userAgent = new Array<string | undefined>(n)
  const referer = new Array<string | undefined>(n)
  for (let i = 0; i < n; i++) {
    const click = clicks[i]!
    at[i] = click.at
    linkId[i] = click.linkId
    domainId[i] = click.domainId
    qr[i] = click.qr ? 1 : 0
    ip[i] = click.ip
    userAgent[i] = click.userAgent
    referer[i] = click.referer
  }
  // The UUID's variant and 50 random bits, without its version digit (`clickId` puts 7 there).
  const nonce = randomUUID().slice(15, 30)
  return { seq, nonce, again: false, at, linkId, domainId, qr, ip, userAgent, referer }
}

/** The number of clicks in a batch. */
export const handedCount = (batch: HandedClicks) => batch.at.length

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
