/**
 * The README's walkthrough as a script (issue #44): its ```sh blocks, each `# → ` answer turned into
 * a marker the script prints, and the comparison of what each command printed with the answer shown.
 */

/** One answer the README shows: its line (1-based) and text, and the commands it answers. */
export interface Step {
  readonly line: number
  readonly expected: string
  readonly commands: string
}

export interface WalkthroughScript {
  /** Bash, line for line the README (lines outside the blocks are empty), printing `marker(i)` at answer i. */
  readonly script: string
  readonly steps: ReadonlyArray<Step>
}

const ANSWER = /^# → (.*)$/
// Continuation lines of an answer are indented under its first; a one-space comment after it is prose.
const CONTINUED = /^# {3,}(.*)$/
const FENCE_OPEN = /^(\s*)```sh\s*$/
const FENCE_CLOSE = /^\s*```\s*$/

/** What the script prints after the output of answer `index`'s commands: a line of its own. */
export const markerLine = (index: number) => `\u001e${index}`

/**
 * The ```sh blocks of the README section `heading` (up to the next `## ` heading) as one script:
 * `set -euo pipefail` and an ERR trap naming the README line on line 1, then each block line at its own
 * line number, so that bash's LINENO is the README's.
 */
export const walkthroughScript = (readme: string, heading: string): WalkthroughScript => {
  const lines = readme.split("\n")
  const start = lines.indexOf(heading)
  if (start < 1) throw new Error(`no "${heading}" after the README's first line`)
  const after = lines.findIndex((line, index) => index > start && line.startsWith("## "))
  const end = after === -1 ? lines.length : after
  const script = lines.map(() => "")
  const steps: Array<Step> = []
  let commands: Array<string> = []
  let indent: string | undefined
  for (let index = start + 1; index < end; index++) {
    const raw = lines[index]!
    if (indent === undefined) {
      indent = FENCE_OPEN.exec(raw)?.[1]
      continue
    }
    if (FENCE_CLOSE.test(raw)) {
      indent = undefined
      continue
    }
    // An indented fence (a block inside a list item) indents its lines as much.
    const line = raw.startsWith(indent) ? raw.slice(indent.length) : raw
    const answer = ANSWER.exec(line)
    if (answer === null) {
      script[index] = line
      if (line.trim() !== "" && !line.startsWith("#")) commands.push(line.trim())
      continue
    }
    const expected = [answer[1]!]
    while (index + 1 < end) {
      const next = lines[index + 1]!
      const continued = CONTINUED.exec(next.startsWith(indent) ? next.slice(indent.length) : next)
      if (continued === null) break
      expected.push(continued[1]!)
      index++
    }
    script[index - expected.length + 1] = `printf '\\n${markerLine(steps.length)}\\n'`
    steps.push({ line: index - expected.length + 2, expected: expected.join("\n"), commands: commands.join(" ") })
    commands = []
  }
  if (indent !== undefined) throw new Error(`a \`\`\`sh block of "${heading}" is not closed`)
  script[0] = `set -euo pipefail; trap 'echo "README.md line $LINENO: exit status $?" >&2' ERR`
  return { script: script.join("\n") + "\n", steps }
}

/**
 * The output of each step, split at the markers: `outputs[i]` answers step i, and one more entry holds
 * what was printed after the last marker; undefined when a marker is missing or out of order.
 */
export const splitOutputs = (stdout: string, steps: number): ReadonlyArray<string> | undefined => {
  const parts = stdout.split(/\n\u001e(\d+)\n/)
  const outputs: Array<string> = []
  for (let index = 0; index < parts.length; index += 2) {
    outputs.push(parts[index]!)
    const marker = parts[index + 1]
    if (marker !== undefined && Number(marker) !== outputs.length - 1) return undefined
  }
  return outputs.length === steps + 1 ? outputs : undefined
}

// ----- comparing an answer with the README's

// What `...` stands for once the README's JSON is parsed: a member of an object, an element of an array.
const MORE = "\u0000more"

/** The README's JSON with `...` for members or elements left out, as JSON with MORE in their place. */
const withEllipses = (text: string) => {
  let out = ""
  const open: Array<string> = []
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!
    if (inString) {
      out += char
      if (char === "\\") out += text[++index] ?? ""
      else if (char === '"') inString = false
      continue
    }
    if (text.startsWith("...", index)) {
      out += open.at(-1) === "{" ? `${JSON.stringify(MORE)}:0` : JSON.stringify(MORE)
      index += 2
      continue
    }
    if (char === '"') inString = true
    else if (char === "{" || char === "[") open.push(char)
    else if (char === "}" || char === "]") open.pop()
    out += char
  }
  return out
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** `...` inside a string or a text line stands for any characters. */
const wildcard = (pattern: string) => new RegExp(`^${pattern.split("...").map(escapeRegExp).join(".*")}$`, "s")

// Dates and times ("2026-12-07", "2026-12-07 17:21:24") depend on the day: compared by their form.
const DATE = /^\d{4}-\d{2}-\d{2}/
// Unix seconds (any time after 2001): the README shows an example, the service answers the clock's.
const TIMESTAMP = 1_000_000_000

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const shown = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 160 ? `${text.slice(0, 160)}...` : text
}

/** The differences between a parsed README answer and the service's, each naming its path. */
const compareJson = (expected: unknown, actual: unknown, path: string, key: string, problems: Array<string>): void => {
  const differ = () => void problems.push(`${path}: the README shows ${shown(expected)}, the service answered ${shown(actual)}`)
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return differ()
    const more = expected.indexOf(MORE)
    const before = more === -1 ? expected : expected.slice(0, more)
    const after = more === -1 ? [] : expected.slice(more + 1)
    const fits = more === -1 ? actual.length === expected.length : actual.length >= before.length + after.length
    if (!fits) return void problems.push(`${path}: the README shows ${expected.length - (more === -1 ? 0 : 1)} element(s)${more === -1 ? "" : " or more"}, the service answered ${actual.length}`)
    before.forEach((element, index) => compareJson(element, actual[index], `${path}[${index}]`, key, problems))
    after.forEach((element, index) => {
      const at = actual.length - after.length + index
      compareJson(element, actual[at], `${path}[${at}]`, key, problems)
    })
    return
  }
  if (isRecord(expected)) {
    if (!isRecord(actual)) return differ()
    const names = Object.keys(expected).filter((name) => name !== MORE)
    for (const name of names) {
      if (!(name in actual)) problems.push(`${path}.${name}: shown in the README, missing from the answer`)
      else compareJson(expected[name], actual[name], `${path}.${name}`, name, problems)
    }
    if (!(MORE in expected)) {
      const extra = Object.keys(actual).filter((name) => !names.includes(name))
      if (extra.length > 0) problems.push(`${path}: the answer has ${extra.join(", ")}, which the README neither shows nor leaves out with ...`)
    }
    return
  }
  if (typeof expected === "number") {
    // Ids and Unix times: the type (and a time's range), not the value.
    if (key === "id" || key.endsWith("_id")) return typeof actual === "number" ? undefined : differ()
    if (expected >= TIMESTAMP) return typeof actual === "number" && actual >= TIMESTAMP ? undefined : differ()
    return actual === expected ? undefined : differ()
  }
  if (typeof expected === "string") {
    if (typeof actual !== "string") return differ()
    if (expected.includes("...")) return wildcard(expected).test(actual) ? undefined : differ()
    if (DATE.test(expected)) return new RegExp(`^${escapeRegExp(expected).replace(/\d/g, "\\d")}$`).test(actual) ? undefined : differ()
    return actual === expected ? undefined : differ()
  }
  return actual === expected ? undefined : differ()
}

/**
 * What differs between the answer the README shows and what the commands printed: JSON by shape
 * (keys, types; values where they do not depend on the run), text line by line; `...` leaves out.
 * `localhost:8080` in the README is the address of the service the test started.
 */
export const compareAnswer = (expectedText: string, output: string, address: string): ReadonlyArray<string> => {
  const expected = expectedText.replaceAll("localhost:8080", address)
  const printed = output.trim()
  if (expected.startsWith("{") || expected.startsWith("[")) {
    let shape: unknown
    try {
      shape = JSON.parse(withEllipses(expected))
    } catch (error) {
      return [`the README's answer is not JSON (${String(error)}): ${expected}`]
    }
    let actual: unknown
    try {
      actual = JSON.parse(printed)
    } catch {
      return [`the README shows JSON, the commands printed ${shown(printed)}`]
    }
    const problems: Array<string> = []
    compareJson(shape, actual, "answer", "", problems)
    return problems
  }
  const want = expected.split("\n")
  const got = printed.split("\n").map((line) => line.trimEnd())
  if (want.length !== got.length) return [`the README shows ${want.length} line(s), the commands printed ${got.length}: ${shown(printed)}`]
  return want.flatMap((line, index) =>
    wildcard(line.trimEnd()).test(got[index]!) ? [] : [`line ${index + 1}: the README shows ${shown(line)}, the commands printed ${shown(got[index])}`]
  )
}
