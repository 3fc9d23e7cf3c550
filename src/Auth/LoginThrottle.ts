import { Clock, Duration, Effect, Either } from "effect"
import { AppConfig } from "../Config.ts"
import { LoginsBusy } from "./AuthErrors.ts"

/** Failures from one network on one e-mail before its attempts wait. */
const FREE_FAILURES = 3
/** Failures from all networks together on one e-mail before every attempt on it waits. */
const FREE_FAILURES_ANY_NETWORK = 20
const MAX_DELAY_MS = 8_000
const FORGET_AFTER_MS = 15 * 60_000
const MAX_TRACKED_EMAILS = 100_000
const MAX_TRACKED_NETWORKS = 1_000

interface Failures {
  count: number
  last: number
}

/** Attempts judged one at a time, and how many hold or wait for the turn. */
interface Line {
  readonly lock: Effect.Semaphore
  waiting: number
}

const line = (): Line => ({ lock: Effect.unsafeMakeSemaphore(1), waiting: 0 })

/** What is known of one e-mail: its failures from every network together, and from each. */
interface EmailRecord {
  readonly any: Failures
  readonly networks: Map<string, Failures>
  readonly line: Line
  readonly networkLines: Map<string, Line>
}

const fresh = (failures: Failures | undefined, now: number) =>
  failures === undefined || now - failures.last > FORGET_AFTER_MS ? 0 : failures.count

const delayAfter = (count: number, free: number) => (count < free ? 0 : Math.min(MAX_DELAY_MS, 250 * 2 ** (count - free)))

const counted = (failures: Failures | undefined, now: number, by: 1 | -1): Failures => ({
  count: Math.max(0, fresh(failures, now) + by),
  last: now
})

/**
 * Growing delays for repeated login failures on one e-mail (known or not), from the network that
 * failed: after 3 failures each of its attempts waits 250 ms, then 500 ms, 1 s, ... up to 8 s, until a
 * success or 15 quiet minutes; so someone who knows an address does not slow its owner's login from
 * elsewhere. After 20 failures from all networks together, every attempt on the e-mail waits the same
 * way. An attempt counts as a failure before it is judged, and while an e-mail (or one network's
 * attempts on it) is slowed its verdicts come one at a time: parallel guesses wait in line, each its
 * full delay. An attempt whose turn would come too late to be answered (its delay and those of the
 * attempts ahead of it in line past four fifths of API_DEADLINE_SECONDS) is refused at once with
 * 503 10901 instead of waiting for the deadline. Counted per instance; requests without an e-mail
 * cannot match an account and are not counted.
 */
export class LoginThrottle extends Effect.Service<LoginThrottle>()("LoginThrottle", {
  effect: Effect.gen(function* () {
    const { apiDeadlineSeconds } = yield* AppConfig
    const lineBudgetMs = apiDeadlineSeconds * 800
    const emails = new Map<string, EmailRecord>()
    const keyOf = (email: string) => email.trim().toLowerCase().slice(0, 320)

    const recordOf = (key: string): EmailRecord => {
      const known = emails.get(key)
      if (known !== undefined) return known
      if (emails.size >= MAX_TRACKED_EMAILS) emails.delete(emails.keys().next().value!)
      const record: EmailRecord = {
        any: { count: 0, last: 0 },
        networks: new Map(),
        line: line(),
        networkLines: new Map()
      }
      emails.set(key, record)
      return record
    }

    const networkLine = (record: EmailRecord, network: string) => {
      const known = record.networkLines.get(network)
      if (known !== undefined) return known
      if (record.networkLines.size >= MAX_TRACKED_NETWORKS) record.networkLines.delete(record.networkLines.keys().next().value!)
      const made = line()
      record.networkLines.set(network, made)
      return made
    }

    /**
     * `attempt` in `queue`, whose attempts are each counted a failure before their turn: the one
     * joining waits for the delays after `failures`, `failures + 1`, ... one per attempt ahead of it.
     */
    const inLine = <A, E, R>(queue: Line, failures: number, free: number, attempt: Effect.Effect<A, E, R>) =>
      Effect.suspend((): Effect.Effect<A, E | LoginsBusy, R> => {
        let due = 0
        for (let ahead = 0; ahead <= queue.waiting; ahead++) due += delayAfter(failures + ahead, free)
        if (due > lineBudgetMs) return Effect.fail(LoginsBusy.of())
        queue.waiting += 1
        return queue.lock.withPermits(1)(attempt).pipe(Effect.ensuring(Effect.sync(() => void (queue.waiting -= 1))))
      })

    const delays = (record: EmailRecord, network: string, now: number) => ({
      network: delayAfter(fresh(record.networks.get(network), now), FREE_FAILURES),
      any: delayAfter(fresh(record.any, now), FREE_FAILURES_ANY_NETWORK)
    })

    const count = (record: EmailRecord, network: string, by: 1 | -1, now: number) => {
      Object.assign(record.any, counted(record.any, now, by))
      const failures = counted(record.networks.get(network), now, by)
      // Re-inserted, so that the networks longest quiet are the first dropped past the bound.
      record.networks.delete(network)
      if (record.networks.size >= MAX_TRACKED_NETWORKS) record.networks.delete(record.networks.keys().next().value!)
      record.networks.set(network, failures)
    }

    /**
     * Judges one login attempt on `email` from `network`: waits as the failures call for (in line
     * while slowed), counts it a failure, then runs `verdict`. A success forgets the e-mail's failures;
     * a failure that is no refusal (`isRefusal` false: the hashing queue was full) is not held against it.
     */
    const judge = <A, E, R>(email: string, network: string, verdict: Effect.Effect<A, E, R>, isRefusal: (error: E) => boolean) => {
      const key = keyOf(email)
      if (key === "") return verdict
      const record = recordOf(key)
      const attempt = Effect.gen(function* () {
        const wait = delays(record, network, yield* Clock.currentTimeMillis)
        const delay = Math.max(wait.network, wait.any)
        if (delay > 0) yield* Effect.sleep(Duration.millis(delay))
        count(record, network, 1, yield* Clock.currentTimeMillis)
        const outcome = yield* Effect.either(verdict)
        if (Either.isRight(outcome)) emails.delete(key)
        else if (!isRefusal(outcome.left)) count(record, network, -1, yield* Clock.currentTimeMillis)
        return yield* outcome
      })
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const slowed = delays(record, network, now)
        const fromNetwork =
          slowed.network > 0
            ? inLine(networkLine(record, network), fresh(record.networks.get(network), now), FREE_FAILURES, attempt)
            : attempt
        return slowed.any > 0 ? inLine(record.line, fresh(record.any, now), FREE_FAILURES_ANY_NETWORK, fromNetwork) : fromNetwork
      })
    }

    return {
      judge,
      /** Forgets every failure on the e-mail, from every network. */
      forget: (email: string) => Effect.sync(() => void emails.delete(keyOf(email)))
    }
  })
}) {}
