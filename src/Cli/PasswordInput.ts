import { Effect } from "effect"
import { passwordProblem } from "../Auth/PasswordRules.ts"
import { type PasswordSource, UsageError } from "./Command.ts"

const usage = (message: string) => new UsageError({ message })

/** All of stdin, less one line ending at its end. */
const fromStdin = Effect.tryPromise({
  try: async () => {
    const chunks: Array<Buffer> = []
    for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)))
    return Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "")
  },
  catch: (error) => usage(`cannot read the password from stdin: ${String(error)}`)
})

/** One line typed on the terminal, not echoed; the question goes to stderr so that stdout holds only the answer. */
const typed = (question: string) =>
  Effect.async<string, UsageError>((resume) => {
    const input = process.stdin
    let value = ""
    const stop = () => {
      input.off("data", onData)
      input.setRawMode(false)
      input.pause()
      process.stderr.write("\n")
    }
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === "\r" || char === "\n") {
          stop()
          return resume(Effect.succeed(value))
        }
        if (char === "\u0003" || char === "\u0004") {
          stop()
          return resume(Effect.fail(usage("no password typed")))
        }
        value = char === "\u007f" || char === "\b" ? value.slice(0, -1) : value + char
      }
    }
    // Raw mode before the question: what is typed as soon as it shows must not be echoed.
    input.setRawMode(true)
    input.setEncoding("utf8")
    input.on("data", onData)
    input.resume()
    process.stderr.write(question)
    return Effect.sync(stop)
  })

const prompted = Effect.gen(function* () {
  if (!process.stdin.isTTY) {
    return yield* usage("no password given: pass it on stdin with --password-stdin, or run on a terminal to be asked for it")
  }
  const first = yield* typed("New password: ")
  const again = yield* typed("The same again: ")
  if (first !== again) return yield* usage("the two passwords typed differ")
  return first
})

/** The password of `source`, checked by the account rules for `email`. */
export const readPassword = (source: PasswordSource, email: string) =>
  Effect.gen(function* () {
    const password = source._tag === "Given" ? source.password : source._tag === "Stdin" ? yield* fromStdin : yield* prompted
    const problem = passwordProblem(password, email)
    if (problem !== undefined) return yield* usage(problem)
    return password
  })
