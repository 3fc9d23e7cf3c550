import { parseArgs } from "node:util"

/**
 * The command line read without Effect or the services: enough for the entry to answer `--help` and
 * `--version` before the rest of the CLI is loaded (docs/CLI.md, "Start-up time").
 */
type Kind = "value" | "flag"

export const optionKinds = {
  name: "value",
  plan: "value",
  "link-quota": "value",
  account: "value",
  email: "value",
  "reassign-to": "value",
  password: "value",
  nickname: "value",
  "first-name": "value",
  "last-name": "value",
  role: "value",
  user: "value",
  domain: "value",
  fields: "value",
  group: "value",
  link: "value",
  owner: "value",
  page: "value",
  from: "value",
  "batch-size": "value",
  "dry-run": "flag",
  output: "value",
  to: "value",
  url: "value",
  events: "value",
  webhook: "value",
  delivery: "value",
  file: "value",
  "password-stdin": "flag",
  on: "flag",
  off: "flag",
  global: "flag",
  json: "flag",
  help: "flag",
  version: "flag"
} as const satisfies Record<string, Kind>

export type OptionName = keyof typeof optionKinds

const isOptionName = (name: string): name is OptionName => Object.hasOwn(optionKinds, name)

/** Commands of one word. */
const ONE_WORD = new Set(["migrate", "import"])

/** The words and options of a command line whose options are all known and well formed. */
export interface Scanned {
  readonly words: ReadonlyArray<string>
  readonly values: ReadonlyMap<OptionName, ReadonlyArray<string>>
  /** The command's name: its first word, or first two. */
  readonly spoken: string
}

export interface ScanResult {
  /** Known even when the rest of the line is wrong. */
  readonly json: boolean
  /** What is wrong with the options, or the line read. */
  readonly scanned: { readonly _tag: "Problem"; readonly message: string } | ({ readonly _tag: "Scanned" } & Scanned)
}

export const scanCommandLine = (argv: ReadonlyArray<string>): ScanResult => {
  const { tokens } = parseArgs({
    args: [...argv],
    options: Object.fromEntries(
      Object.entries(optionKinds).map(([name, kind]) => [name, { type: kind === "value" ? "string" : "boolean" }] as const)
    ),
    strict: false,
    allowPositionals: true,
    tokens: true
  })
  const json = tokens.some((token) => token.kind === "option" && token.name === "json")
  const problem = (message: string): ScanResult => ({ json, scanned: { _tag: "Problem", message } })
  const words: Array<string> = []
  const values = new Map<OptionName, Array<string>>()
  for (const token of tokens) {
    if (token.kind === "positional") words.push(token.value)
    if (token.kind !== "option") continue
    const name = token.name
    if (!isOptionName(name)) return problem(`unknown option ${token.rawName}`)
    if (optionKinds[name] === "flag") {
      if (token.value !== undefined) return problem(`--${name} takes no value`)
      values.set(name, [...(values.get(name) ?? []), ""])
    } else {
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith("--"))) return problem(`--${name} needs a value`)
      values.set(name, [...(values.get(name) ?? []), token.value])
    }
  }
  const spoken = words.slice(0, ONE_WORD.has(words[0] ?? "") ? 1 : 2).join(" ")
  return { json, scanned: { _tag: "Scanned", words, values, spoken } }
}

/** `--version`, `--help` or no command at all: answered without the rest of the CLI. */
export const isHelpOrVersion = ({ words, values }: Scanned) => values.has("version") || values.has("help") || words.length === 0
