/** Samples of a Prometheus text exposition, by name with labels as written (`a{b="c"}`). */
export const parsePrometheus = (text: string) => {
  const samples = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const space = line.lastIndexOf(" ")
    samples.set(line.slice(0, space), Number(line.slice(space + 1)))
  }
  return samples
}

/** The service's /metrics samples (none when it does not answer). */
export const metricsOf = async (baseUrl: string) => {
  try {
    const response = await fetch(`${baseUrl}/metrics`)
    return parsePrometheus(await response.text())
  } catch {
    return new Map<string, number>()
  }
}

/** The first sample whose name and labels contain every fragment. */
export const sample = (samples: Map<string, number>, ...fragments: ReadonlyArray<string>) => {
  for (const [key, value] of samples) if (fragments.every((fragment) => key.includes(fragment))) return value
  return undefined
}
