import { recordClickLimitLeasedVisit, recordClickLimitRoundTrip, recordClickLimitWait } from "../Platform/Metrics.ts"

/** Whether this visitor is one of the link's `max_clicks`: `last` when it is the final one. */
export type Turn = "allowed" | "last" | "exhausted"

/**
 * A link's part of one round trip: `n` visits asking for a turn each, and this instance's lease of
 * the link: `consumed` of its slots answered since the last round trip, `keep` of them it still holds
 * and keeps, `want` more it asks for (all 0 without a lease).
 */
export interface Asked {
  readonly n: number
  readonly max: number
  readonly consumed: number
  readonly keep: number
  readonly want: number
}

/**
 * The link's answer: `before` visits were counted ahead of the `n`, the first `granted` of which got
 * a turn; `lent` slots were added to this instance's lease, which kept `kept` of the `keep` asked
 * (fewer when another instance had taken the lease back); other instances hold `others` slots;
 * `used` visits are counted in all.
 */
export interface Counted {
  readonly before: number
  readonly granted: number
  readonly lent: number
  readonly kept: number
  readonly others: number
  readonly used: number
}

/** One round trip counting the visits of every link asked for; a link left out got no turn. */
export type Count = (asked: ReadonlyMap<number, Asked>) => Promise<ReadonlyMap<number, Counted>>

/**
 * How long a lease lasts unless renewed, how long a link goes unvisited before its lease is cut to a
 * reserve, and how long before the reserve goes back too and the link is forgotten, its rate with it.
 */
export interface LeaseTimes {
  readonly leaseMs: number
  readonly idleMs: number
  readonly forgetMs: number
}

export const LEASE_TIMES: LeaseTimes = { leaseMs: 10_000, idleMs: 1_000, forgetMs: 60_000 }

/** The fewest slots worth a lease; the counter lends none when its share of the room is smaller. */
export const MIN_BLOCK = 4
/** The block asked for before a link's rate is known (its first visits wait for the round trip that lends it). */
const FIRST_BLOCK = 64
/** A block lasts about this long at the link's recent rate of visits (longer when round trips are slow). */
const BLOCK_SPAN_MS = 1_000
/** A block lasts at least this many round trips, so that its top-up (at half) returns before it runs out. */
const SPAN_ROUND_TRIPS = 4
const MAX_BLOCK = 10_000
/** The rate is measured over at least this long, or this long at the least once the window's visits exceed a block. */
const RATE_WINDOW_MS = 50
const SHORT_WINDOW_MS = 10
/** An idle link keeps this part of its block, while far from its limit, until it is forgotten. */
const RESERVE_SHARE = 4
/** Visits that found the room held by other instances' leases ask again after this long. */
const RETRY_MS = 20
/**
 * Leases due with no visit waiting (top-ups, renewals, cuts) wait this long (at most a twentieth of
 * the lease's life) for others to share their round trip: a top-up leaves half a block, which lasts
 * a second at the link's rate, so it has time to spare; and a statement's fixed cost, spread over one
 * or two links, was most of what click-limited links cost PostgreSQL.
 */
const LINGER_MS = 25

interface Visit {
  readonly resolve: (turn: Turn) => void
  readonly reject: (error: unknown) => void
}

interface Waiting {
  readonly max: number
  readonly visits: Array<Visit>
}

/** This instance's lease of one link, and the link's recent rate of visits. */
interface Lease {
  max: number
  /** Slots this instance may still answer from. */
  held: number
  /** Slots answered since the round trip that last carried the count. */
  consumed: number
  /** No slot is answered from after this (performance.now()): the row's expiry less a margin. */
  until: number
  /** The lease is renewed by a round trip after this. */
  renewAt: number
  lastVisit: number
  want: number
  windowStart: number
  windowVisits: number
  /** The next round trip gives back the held slots past this many (Infinity: none). */
  keepAtMost: number
  /** At the last round trip, an eighth of the link's room not held by any lease was a whole block at least. */
  roomy: boolean
  /** The round trip under way carries this lease: kept until it is answered. */
  carried: boolean
}

/** The turn of a visit given one: the `used`-th of the link's `max`. */
const turnOf = (used: number, max: number): Turn => (used === max ? "last" : "allowed")

/**
 * Visits counted by `count`, one round trip at a time per process: the visits that arrive while one
 * is under way wait for the next, which counts them together (a lone visit goes at once, after the
 * visits of the same turn of the event loop). With `leasing`, each round trip also asks for a block
 * of slots of each link it counts, sized to the link's recent rate; the link's row lends it while
 * the room left is large (docs/decisions/0021-smart-links-visitor-side.md), and the link's next visits are
 * answered from it without a round trip. A lease is topped up when half spent, renewed halfway
 * through its life, cut to a reserve after `idleMs` without visits (`sweep`), and given back by
 * `stop`; a round trip that carries leases alone, no visit, waits `LINGER_MS` for others to join it.
 * `reached` archives a link whose last slots were answered from leases.
 */
export const leasedCounter = (count: Count, leasing: boolean, reached: (linkId: number) => void, times: LeaseTimes) => {
  let waiting = new Map<number, Waiting>()
  let due = new Set<number>()
  const leases = new Map<number, Lease>()
  let running = false
  let stopping = false
  const stopped: Array<() => void> = []
  const lingerMs = Math.min(LINGER_MS, times.leaseMs / 20)
  let lingering: ReturnType<typeof setTimeout> | undefined

  const linger = () => {
    lingering ??= setTimeout(() => {
      lingering = undefined
      if (!running) flush(true)
    }, lingerMs)
  }

  /** A round trip would carry only leases: it may wait for company. */
  const onlyLeases = () => waiting.size === 0 && !stopping

  const kick = () => {
    if (running) return
    if (onlyLeases()) return linger()
    running = true
    setImmediate(flush)
  }

  const fromLease = (lease: Lease, now: number) => {
    if (lease.held === 0 || now >= lease.until) return false
    lease.held -= 1
    lease.consumed += 1
    recordClickLimitLeasedVisit()
    return true
  }

  /** How long a round trip takes, smoothed. */
  let roundTripMs = 0

  const wantOf = (lease: Lease, now: number) => {
    // Until a block was lent the visits counted say little of the rate: the first block is asked for.
    if (lease.until === 0) return lease.want
    const elapsed = now - lease.windowStart
    // A link busier than its block: measured over a shorter window, lest its visits wait meanwhile.
    if (elapsed >= RATE_WINDOW_MS || (lease.windowVisits > lease.want && elapsed >= SHORT_WINDOW_MS)) {
      const span = Math.max(BLOCK_SPAN_MS, SPAN_ROUND_TRIPS * roundTripMs)
      lease.want = Math.min(MAX_BLOCK, Math.max(4 * MIN_BLOCK, Math.ceil((lease.windowVisits * span) / elapsed)))
      lease.windowStart = now
      lease.windowVisits = 0
    }
    return lease.want
  }

  /** Takes out of the waiting visits and the leases due what one round trip carries. */
  const collect = (now: number) => {
    const asked = new Map<number, Asked>()
    for (const [id, { max, visits }] of waiting) asked.set(id, { n: visits.length, max, consumed: 0, keep: 0, want: 0 })
    for (const id of due) {
      const lease = leases.get(id)
      if (lease !== undefined && !asked.has(id)) asked.set(id, { n: 0, max: lease.max, consumed: 0, keep: 0, want: 0 })
    }
    for (const [id, ask] of asked) {
      const lease = leases.get(id)
      if (lease === undefined) continue
      const releasing = stopping || lease.keepAtMost < Infinity
      lease.held = stopping || now >= lease.until ? 0 : Math.min(lease.held, lease.keepAtMost)
      const want = releasing ? 0 : wantOf(lease, now)
      asked.set(id, { ...ask, consumed: lease.consumed, keep: lease.held, want })
      lease.consumed = 0
      lease.keepAtMost = Infinity
      lease.carried = true
    }
    const batch = waiting
    waiting = new Map()
    due = new Set()
    return { asked, batch }
  }

  const send = async (asked: ReadonlyMap<number, Asked>, batch: ReadonlyMap<number, Waiting>, sentAt: number) => {
    const counted = await count(asked)
    roundTripMs = roundTripMs === 0 ? performance.now() - sentAt : 0.8 * roundTripMs + 0.2 * (performance.now() - sentAt)
    recordClickLimitRoundTrip([...batch.values()].reduce((sum, { visits }) => sum + visits.length, 0))
    const again: Array<[number, number, Visit]> = []
    for (const [id, ask] of asked) {
      const got = counted.get(id)
      const lease = leases.get(id)
      if (lease !== undefined && got !== undefined) {
        lease.held = Math.max(0, lease.held - (ask.keep - got.kept)) + got.lent
        if (got.lent > 0 || got.kept > 0) {
          lease.until = sentAt + times.leaseMs * 0.75
          lease.renewAt = sentAt + times.leaseMs / 2
        }
        lease.roomy = (ask.max - got.used - got.others - lease.held) / 8 >= lease.want
      }
      if (got !== undefined && got.granted === 0 && ask.consumed > 0 && got.used === ask.max) reached(id)
      const visits = batch.get(id)?.visits ?? []
      visits.forEach((visit, i) => {
        if (got !== undefined && i < got.granted) visit.resolve(turnOf(got.before + i + 1, ask.max))
        else if (got !== undefined && got.others > 0) again.push([id, ask.max, visit])
        else visit.resolve("exhausted")
      })
    }
    // The room left is held by other instances' leases, spent or given back soon (or taken back
    // when they expire): these visits ask again rather than be turned away.
    if (again.length > 0) setTimeout(() => {
      for (const [id, max, visit] of again) enqueue(id, max, visit)
    }, RETRY_MS)
  }

  const flush = (lingered = false) => {
    const now = performance.now()
    for (const [id, entry] of waiting) {
      const lease = leases.get(id)
      if (lease === undefined) continue
      let answered = 0
      while (answered < entry.visits.length && fromLease(lease, now)) entry.visits[answered++]!.resolve("allowed")
      entry.visits.splice(0, answered)
      if (entry.visits.length === 0) waiting.delete(id)
    }
    if (waiting.size === 0 && due.size === 0) {
      running = false
      for (const done of stopped.splice(0)) done()
      return
    }
    if (onlyLeases() && !lingered) {
      running = false
      return linger()
    }
    clearTimeout(lingering)
    lingering = undefined
    running = true
    const { asked, batch } = collect(now)
    send(asked, batch, now)
      .catch((error: unknown) => {
        for (const { visits } of batch.values()) for (const visit of visits) visit.reject(error)
        // The statement changed nothing: the slots answered from leases are reported by the next one.
        for (const [id, { consumed }] of asked) {
          const lease = leases.get(id)
          if (lease !== undefined) lease.consumed += consumed
        }
      })
      .finally(() => {
        for (const id of asked.keys()) {
          const lease = leases.get(id)
          if (lease !== undefined) lease.carried = false
        }
        flush()
      })
  }

  const enqueue = (linkId: number, max: number, visit: Visit) => {
    let entry = waiting.get(linkId)
    if (entry === undefined) {
      entry = { max, visits: [] }
      waiting.set(linkId, entry)
    }
    entry.visits.push(visit)
    kick()
  }

  /**
   * After `idleMs` without visits a lease is cut down to a reserve (a quarter of its block) that
   * answers the link's next burst at once while its top-up goes, when the link was far from its
   * limit; the reserve is renewed with the lease until `forgetMs` without visits, and goes back
   * then, or as soon as a statement finds the link near its limit.
   */
  const sweep = () => {
    const now = performance.now()
    for (const [id, lease] of leases) {
      if (now - lease.lastVisit >= times.idleMs) {
        if (lease.carried) continue
        if (lease.held === 0 && lease.consumed === 0) {
          if (now - lease.lastVisit >= times.forgetMs) leases.delete(id)
          continue
        }
        const reserve = lease.roomy && now - lease.lastVisit < times.forgetMs ? Math.ceil(lease.want / RESERVE_SHARE) : 0
        if (lease.held > reserve || lease.consumed > 0 || now >= lease.renewAt) {
          lease.keepAtMost = reserve
          due.add(id)
        }
      } else if (lease.held > 0 && now >= lease.renewAt) due.add(id)
    }
    if (due.size > 0) kick()
  }
  const sweeper = leasing ? setInterval(sweep, Math.max(10, times.idleMs / 4)) : undefined
  sweeper?.unref()

  /** The visit's turn: at once when this instance's lease answers it, else once a round trip counted it. */
  const visit = (linkId: number, max: number): "allowed" | Promise<Turn> => {
    if (leasing) {
      const now = performance.now()
      let lease = leases.get(linkId)
      if (lease === undefined) {
        lease = { max, held: 0, consumed: 0, until: 0, renewAt: 0, lastVisit: now, want: FIRST_BLOCK, windowStart: now, windowVisits: 0, keepAtMost: Infinity, roomy: false, carried: false }
        leases.set(linkId, lease)
      } else if (now - lease.lastVisit >= times.idleMs) {
        // Back after a pause: the rate is measured afresh, the block asked for meanwhile is the last one.
        lease.windowStart = now
        lease.windowVisits = 0
      }
      lease.max = max
      lease.lastVisit = now
      lease.windowVisits += 1
      if (fromLease(lease, now)) {
        if (lease.held <= lease.want / 2 && !stopping) {
          due.add(linkId)
          kick()
        }
        return "allowed"
      }
    }
    recordClickLimitWait()
    return new Promise<Turn>((resolve, reject) => enqueue(linkId, max, { resolve, reject }))
  }

  const take = (linkId: number, max: number): Promise<Turn> => {
    const turn = visit(linkId, max)
    return typeof turn === "string" ? Promise.resolve(turn) : turn
  }

  /** Gives every lease back (after the round trip under way); later visits are counted one by one. */
  const stop = () =>
    new Promise<void>((resolve) => {
      stopping = true
      clearInterval(sweeper)
      for (const [id, lease] of leases) if (lease.held > 0 || lease.consumed > 0) due.add(id)
      stopped.push(resolve)
      kick()
    })

  return { take, visit, stop }
}
