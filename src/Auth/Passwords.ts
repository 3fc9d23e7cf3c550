import { Effect } from "effect"
import { availableParallelism } from "node:os"
import { LoginsBusy } from "./AuthErrors.ts"
import { CpuBudget } from "./CpuBudget.ts"
import { FairQueue } from "./FairQueue.ts"
import { type HashThread, hashThreads } from "./HashThreads.ts"
import { MAX_PASSWORD_LENGTH } from "./PasswordRules.ts"

/** The network key of work that comes from no client: the admin CLI and the first start. */
const LOCAL = "local"

interface PasswordsOptions {
  /** Hashes running at once, each on its own thread; argon2id takes 19 MiB and a core for tens of milliseconds. */
  readonly concurrency: number
  /** Hashes waiting for a thread; past this a login flood is answered 503 at once. */
  readonly maxWaiting: number
  /** Hashes of one client network waiting or running at once; past this that network is answered 503. */
  readonly perNetwork: number
  /** Cores hashing may use on average (bursts of a second beyond that), so that a flood leaves redirects alone. */
  readonly cores: number
}

/**
 * argon2id with the library defaults (m=19456 KiB, t=2, p=1), on threads of the lowest CPU priority,
 * shared fairly between client networks (`FairQueue.ts`): a flood from a few networks cannot make a
 * login from another wait behind it. Verification of an unknown e-mail runs against a dummy hash, so
 * the answer and its timing do not tell which e-mails exist.
 */
export class Passwords extends Effect.Service<Passwords>()("Passwords", {
  scoped: Effect.fnUntraced(function* (options: PasswordsOptions) {
    const threads = yield* hashThreads(options.concurrency)
    // Wall-clock pacing on purpose: it shares out real CPU time, whatever clock the caller runs on. A
    // hash waiting for a core is charged too, so a busy machine slows logins down further. A thread is
    // handed out only when the budget allows, to the network whose turn it is then.
    const budget = new CpuBudget(options.cores, 1000, Date.now())
    const queue = new FairQueue<HashThread>(threads, options.perNetwork, options.maxWaiting, () => budget.delay(Date.now()))
    const paced = <A>(work: () => Promise<A>) =>
      Effect.promise(async () => {
        const started = Date.now()
        try {
          return await work()
        } finally {
          budget.spent(Date.now() - started, Date.now())
        }
      })

    /** `work` on a thread, once `network`'s turn comes; 503 10901 at once when its share or the queue is full. */
    const limited = <A>(network: string, work: (thread: HashThread) => Promise<A>) =>
      Effect.suspend(() => {
        if (!queue.admit(network)) return Effect.fail(LoginsBusy.of())
        return Effect.acquireUseRelease(
          Effect.async<HashThread>((resume) => queue.take(network, (thread) => resume(Effect.succeed(thread)))),
          (thread) => paced(() => work(thread)),
          (thread) => Effect.sync(() => queue.give(network, thread))
        )
      })

    const dummyHash = yield* limited(LOCAL, (thread) => thread.hash("dummy password that never matches anything")).pipe(Effect.orDie)

    return {
      /** A new password's hash (the admin CLI, the first start; a smart link's, for a client `network`). */
      hash: (password: string, network: string = LOCAL) =>
        limited(network, (thread) => thread.hash(password)).pipe(Effect.withSpan("password.hash")),
      /**
       * Whether `password` matches `stored`, for a login from `network` (`ClientIp.clientNetwork`);
       * with `stored` undefined, the same work against the dummy and false.
       */
      verify: (stored: string | undefined, password: string, network: string = LOCAL) =>
        password.length > MAX_PASSWORD_LENGTH
          ? Effect.succeed(false)
          : limited(network, (thread) => thread.verify(stored ?? dummyHash, password)).pipe(
              Effect.map((ok) => ok && stored !== undefined),
              Effect.withSpan("password.verify")
            )
    }
  })
}) {
  /**
   * One core is always left to the event loop, which answers redirects, and hashing gets a sixteenth of
   * the machine on average: a login flood cannot take the cores the redirects need.
   */
  static readonly layer = Passwords.Default({
    concurrency: Math.max(1, Math.min(4, availableParallelism() - 1)),
    maxWaiting: 64,
    perNetwork: 2,
    cores: availableParallelism() / 16
  })
}
