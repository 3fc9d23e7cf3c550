/** What a command answers: the `--json` object and the line shown otherwise. */
export interface Outcome {
  readonly json: Readonly<Record<string, unknown>>
  readonly text: string
  /** The command has written its answer to standard output itself (an export's CSV): nothing more is printed. */
  readonly printed?: true
}
