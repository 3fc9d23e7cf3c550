export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface Exposition {
  readonly types: ReadonlyMap<string, string>
  readonly samples: ReadonlyArray<Sample>
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y

const parseLabels = (text: string, line: string): Record<string, string> => {
  const labels: Record<string, string> = {}
  LABEL.lastIndex = 0
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text)
    if (match === null) throw new Error(`malformed labels in: ${line}`)
    labels[match[1]!] = match[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\")
  }
  return labels
}

const parseValue = (text: string, line: string) => {
  if (text === "+Inf") return Infinity
  if (text === "-Inf") return -Infinity
  const value = Number(text)
  if (text === "" || Number.isNaN(value)) throw new Error(`malformed value in: ${line}`)
  return value
}

/** A strict reader of the Prometheus text format (0.0.4): any line it does not understand throws. */
export const parseExposition = (text: string): Exposition => {
  const types = new Map<string, string>()
  const samples: Array<Sample> = []
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP ")) continue
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type !== null) {
      if (types.has(type[1]!)) throw new Error(`TYPE given twice for ${type[1]}`)
      types.set(type[1]!, type[2]!)
      continue
    }
    const sample = SAMPLE.exec(line)
    if (sample === null) throw new Error(`malformed line: ${line}`)
    samples.push({ name: sample[1]!, labels: parseLabels(sample[2] ?? "", line), value: parseValue(sample[3]!, line) })
  }
  return { types, samples }
}

const matches = (sample: Sample, name: string, labels: Readonly<Record<string, string>>) =>
  sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)

/** The sum of the samples of `name` carrying the given labels (0 when there is none yet). */
export const valueOf = (exposition: Exposition, name: string, labels: Readonly<Record<string, string>> = {}) =>
  exposition.samples.filter((sample) => matches(sample, name, labels)).reduce((sum, sample) => sum + sample.value, 0)

export const samplesOf = (exposition: Exposition, name: string, labels: Readonly<Record<string, string>> = {}) =>
  exposition.samples.filter((sample) => matches(sample, name, labels))
