/** What a command answers: the `--json` object and the line shown otherwise. */
export interface Outcome {
  readonly json: Readonly<Record<string, unknown>>
  readonly text: string
}
