/** Steps registered while setting up, run once in reverse order; a failing step does not stop the rest. */
export class Cleanup {
  private readonly steps: Array<{ readonly name: string; readonly run: () => Promise<void> }> = []
  private done: Promise<void> | undefined

  defer(name: string, run: () => Promise<void>): void {
    this.steps.push({ name, run })
  }

  runAll(): Promise<void> {
    this.done ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step.run()
        } catch (error) {
          process.stderr.write(`cleanup: ${step.name} failed: ${String(error)}\n`)
        }
      }
    })()
    return this.done
  }
}

/** Runs a bench program: its exit code, cleanup on any exit (also SIGINT and SIGTERM), failures on stderr. */
export const runProgram = (name: string, run: (cleanup: Cleanup) => Promise<number>) => {
  const cleanup = new Cleanup()
  const finish = async (code: number) => {
    await cleanup.runAll()
    process.exit(code)
  }
  process.once("SIGINT", () => void finish(130))
  process.once("SIGTERM", () => void finish(143))
  run(cleanup).then(finish, async (error: unknown) => {
    process.stderr.write(`${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    await finish(1)
  })
}
