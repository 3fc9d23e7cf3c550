/** What a command answers: the `--json` object and the line shown otherwise. */
export interface Outcome {
  readonly json: Readonly<Record<string, unknown>>
  readonly text: string
  /** The command has written its answer to standard output itself (an export's CSV): nothing more is printed. */
  readonly printed?: true
}

/** A row's own fields, as `--json` prints them. */
export const fieldsOf = (row: object): Readonly<Record<string, unknown>> => Object.fromEntries(Object.entries(row))
