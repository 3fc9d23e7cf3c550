/** One long-lived block of held batches' bytes. */
class Slab {
  used = 0
  /** Batches in it not released yet. */
  held = 0
  constructor(readonly bytes: Uint8Array) {}
}

/** Bytes of one slab: a second of clicks at 3,000 a second fills about two. */
export const SLAB_BYTES = 256 * 1024
/** Empty slabs kept for reuse, 4 MiB: what a burst held beyond them is given back. */
const KEPT_FREE = 16

/**
 * Copies of the handed batches' bytes, kept by the redirect thread until the writer reports them
 * written, in a few long-lived slabs reused as batches are released. An array buffer per batch, held
 * for the second until the writer's report, outlived two scavenges: promoted, its memory came back
 * only with a mark-compact, which that external memory brought about.
 */
export class HeldBytes {
  private current: Slab | undefined
  private readonly free: Array<Slab> = []
  private readonly slabs = new Map<ArrayBufferLike, Slab>()

  /** A copy of `bytes` (itself when larger than a slab) to hold until `release`. */
  hold(bytes: Uint8Array): Uint8Array {
    if (bytes.length > SLAB_BYTES) return bytes
    let slab = this.current
    if (slab === undefined || slab.used + bytes.length > SLAB_BYTES) {
      if (slab !== undefined && slab.held === 0) slab.used = 0
      else slab = this.free.pop() ?? this.newSlab()
      this.current = slab
    }
    const at = slab.used
    slab.bytes.set(bytes, at)
    slab.used += bytes.length
    slab.held++
    return slab.bytes.subarray(at, at + bytes.length)
  }

  /** Gives back what `hold` answered. */
  release(held: Uint8Array): void {
    const slab = this.slabs.get(held.buffer)
    if (slab === undefined) return
    slab.held--
    if (slab.held > 0) return
    slab.used = 0
    if (slab === this.current) return
    if (this.free.length < KEPT_FREE) this.free.push(slab)
    else this.slabs.delete(slab.bytes.buffer)
  }

  /** Slabs in use or kept for reuse. */
  get slabCount(): number {
    return this.slabs.size
  }

  private newSlab(): Slab {
    const slab = new Slab(new Uint8Array(SLAB_BYTES))
    this.slabs.set(slab.bytes.buffer, slab)
    return slab
  }
}
