import { Effect } from "effect"

/** One metric family as the Prometheus text format writes it: its samples are whole lines. */
export interface Family {
  readonly name: string
  readonly type: "counter" | "gauge" | "histogram" | "summary"
  readonly help: string
  readonly samples: ReadonlyArray<string>
}

/** A gauge family of one sample per label set (`[['state="idle"', 3]]`), or of one sample without labels. */
export const gaugeFamily = (name: string, help: string, values: number | ReadonlyArray<readonly [string, number]>): Family => ({
  name,
  type: "gauge",
  help,
  samples: typeof values === "number" ? [`${name} ${values}`] : values.map(([labels, value]) => `${name}{${labels}} ${value}`)
})

/** Families read when `/metrics` is scraped, by what makes them. */
const collectors = new Map<string, () => ReadonlyArray<Family>>()

/**
 * Adds `collect` to every scrape for the life of the scope, in place of an earlier collector of the
 * same key (a second service in one process, as in tests, reports its own).
 */
export const registerCollector = (key: string, collect: () => ReadonlyArray<Family>) =>
  Effect.acquireRelease(
    Effect.sync(() => collectors.set(key, collect)),
    () =>
      Effect.sync(() => {
        if (collectors.get(key) === collect) collectors.delete(key)
      })
  )

/** The families of every registered collector. */
export const collected = (): ReadonlyArray<Family> => [...collectors.values()].flatMap((collect) => collect())
