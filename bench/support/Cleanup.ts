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
