/**
 * The problems `promtool check metrics` reports for a Prometheus text exposition (format 0.0.4),
 * checked more strictly than promtool 2.42 does: a family's HELP and TYPE once each and before its
 * samples, samples of a family together, help text on every family, valid metric and label names,
 * no camelCase, counters and only counters ending in `_total`, `le` on histograms only and
 * `quantile` on summaries only, no abbreviated or non-base units, no duplicate series, and every
 * histogram series with `_bucket`s of increasing bounds and cumulative counts ending at `+Inf` = its
 * `_count`, and a `_sum`.
 */
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const SAMPLE = /^([^\s{]+)(?:\{(.*)\})? (\S+)(?: -?\d+)?$/
const LABEL = /([^=,"\s]+)="((?:[^"\\]|\\.)*)"(,|$)/y
const ABBREVIATIONS = ["s", "ms", "us", "ns", "sec", "b", "kb", "mb", "gb", "tb", "pb", "m", "h", "d"]
const NON_BASE_UNITS = ["minutes", "hours", "days", "weeks", "milliseconds", "microseconds", "nanoseconds", "bits", "kilobytes", "megabytes", "gigabytes", "percent"]

interface Family {
  help?: string
  type?: string
  readonly samples: Array<{ readonly name: string; readonly labels: ReadonlyArray<readonly [string, string]>; readonly value: number }>
}

const parseLabels = (text: string, problems: Array<string>, line: string) => {
  const labels: Array<readonly [string, string]> = []
  LABEL.lastIndex = 0
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text)
    if (match === null) {
      problems.push(`malformed labels: ${line}`)
      return labels
    }
    labels.push([match[1]!, match[2]!])
  }
  return labels
}

const parseValue = (text: string) => (text === "+Inf" ? Infinity : text === "-Inf" ? -Infinity : text === "NaN" ? NaN : Number(text))

/** The family a sample belongs to: histograms and summaries name theirs without the suffix. */
const familyOf = (name: string, families: ReadonlyMap<string, Family>) => {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!name.endsWith(suffix)) continue
    const base = name.slice(0, -suffix.length)
    const type = families.get(base)?.type
    if (type === "histogram" || (type === "summary" && suffix !== "_bucket")) return base
  }
  return name
}

export const promLint = (text: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const families = new Map<string, Family>()
  const finished = new Set<string>()
  let current: string | undefined
  const enter = (name: string) => {
    if (current !== name) {
      if (current !== undefined) finished.add(current)
      if (finished.has(name)) problems.push(`${name}: its lines are not together`)
      current = name
    }
    let family = families.get(name)
    if (family === undefined) {
      family = { samples: [] }
      families.set(name, family)
    }
    return family
  }
  if (!text.endsWith("\n")) problems.push("the exposition does not end with a new line")
  for (const line of text.split("\n")) {
    if (line === "") continue
    if (line.startsWith("#")) {
      const comment = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line)
      if (comment === null) continue
      const [, kind, name, rest = ""] = comment
      if (!METRIC_NAME.test(name!)) problems.push(`invalid metric name ${name}`)
      const family = enter(name!)
      if (kind === "HELP") {
        if (family.help !== undefined) problems.push(`${name}: HELP given twice`)
        family.help = rest
      } else {
        if (family.type !== undefined) problems.push(`${name}: TYPE given twice`)
        if (family.samples.length > 0) problems.push(`${name}: TYPE after its samples`)
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) problems.push(`${name}: unknown type ${rest}`)
        family.type = rest
      }
      continue
    }
    const sample = SAMPLE.exec(line)
    if (sample === null) {
      problems.push(`malformed line: ${line}`)
      continue
    }
    const name = sample[1]!
    if (!METRIC_NAME.test(name)) problems.push(`invalid metric name ${name}`)
    const labels = parseLabels(sample[2] ?? "", problems, line)
    for (const [label] of labels) {
      if (!LABEL_NAME.test(label) || label.startsWith("__")) problems.push(`${name}: invalid label name ${label}`)
      if (/[A-Z]/.test(label)) problems.push(`${name}: label names should be written in snake_case, not camelCase: ${label}`)
    }
    if (new Set(labels.map(([label]) => label)).size !== labels.length) problems.push(`${name}: a label given twice: ${line}`)
    const value = parseValue(sample[3]!)
    if (Number.isNaN(value) && sample[3] !== "NaN") problems.push(`malformed value: ${line}`)
    enter(familyOf(name, families)).samples.push({ name, labels, value })
  }

  for (const [name, family] of families) {
    const type = family.type ?? "untyped"
    if (family.help === undefined || family.help.trim() === "") problems.push(`${name}: no help text`)
    if (/[A-Z]/.test(name)) problems.push(`${name}: metric names should be written in snake_case, not camelCase`)
    if (type === "counter" && !name.endsWith("_total")) problems.push(`${name}: counter metrics should have "_total" suffix`)
    if (type !== "counter" && type !== "untyped" && name.endsWith("_total")) problems.push(`${name}: non-counter metrics should not have "_total" suffix`)
    for (const suffix of ["_bucket", "_count", "_sum"]) {
      if (type !== "histogram" && type !== "summary" && name.endsWith(suffix)) problems.push(`${name}: non-histogram metrics should not have "${suffix}" suffix`)
    }
    const lower = name.toLowerCase()
    for (const unit of ABBREVIATIONS) {
      if (lower.includes(`_${unit}_`) || lower.endsWith(`_${unit}`)) problems.push(`${name}: metric names should not contain abbreviated units (${unit})`)
    }
    for (const unit of NON_BASE_UNITS) {
      if (lower.includes(unit)) problems.push(`${name}: use base units, not ${unit}`)
    }
    const seen = new Set<string>()
    for (const sample of family.samples) {
      const id = `${sample.name}{${[...sample.labels].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join(",")}}`
      if (seen.has(id)) problems.push(`duplicate series ${id}`)
      seen.add(id)
      const names = sample.labels.map(([label]) => label)
      if (type !== "histogram" && names.includes("le")) problems.push(`${name}: non-histogram metrics should not have "le" label`)
      if (type !== "summary" && names.includes("quantile")) problems.push(`${name}: non-summary metrics should not have "quantile" label`)
      if (type === "histogram" && ![`${name}_bucket`, `${name}_sum`, `${name}_count`].includes(sample.name)) {
        problems.push(`${name}: histogram sample ${sample.name} is not _bucket, _sum or _count`)
      }
      if (type === "histogram" && sample.name === `${name}_bucket` && !names.includes("le")) problems.push(`${name}: a bucket without le`)
    }
    if (type === "histogram") problems.push(...histogramProblems(name, family))
  }
  return problems
}

const seriesKey = (labels: ReadonlyArray<readonly [string, string]>) =>
  labels.filter(([label]) => label !== "le").map(([k, v]) => `${k}=${v}`).sort().join(",")

const histogramProblems = (name: string, family: Family): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const series = new Map<string, { buckets: Array<readonly [number, number]>; sum?: number; count?: number }>()
  for (const sample of family.samples) {
    const key = seriesKey(sample.labels)
    const entry = series.get(key) ?? { buckets: [] }
    series.set(key, entry)
    if (sample.name.endsWith("_bucket")) entry.buckets.push([parseValue(sample.labels.find(([label]) => label === "le")?.[1] ?? "NaN"), sample.value])
    else if (sample.name.endsWith("_sum")) entry.sum = sample.value
    else entry.count = sample.value
  }
  for (const [key, { buckets, sum, count }] of series) {
    const at = `${name}{${key}}`
    if (sum === undefined) problems.push(`${at}: no _sum`)
    if (count === undefined) problems.push(`${at}: no _count`)
    if (buckets.at(-1)?.[0] !== Infinity) problems.push(`${at}: no +Inf bucket last`)
    buckets.forEach(([bound, value], i) => {
      if (Number.isNaN(bound)) problems.push(`${at}: a bucket bound that is not a number`)
      if (i > 0 && bound <= buckets[i - 1]![0]) problems.push(`${at}: bucket bounds not increasing at le=${bound}`)
      if (i > 0 && value < buckets[i - 1]![1]) problems.push(`${at}: bucket counts not cumulative at le=${bound}`)
    })
    if (count !== undefined && buckets.at(-1)?.[1] !== count) problems.push(`${at}: the +Inf bucket is not the _count`)
  }
  return problems
}
