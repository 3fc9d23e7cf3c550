import { Schema } from "effect"

/**
 * An optional value of an answer: left out of the object when unset, never `null`, since clients
 * generated from the real API's document refuse a null where it types an integer or a string.
 */
export const Unset = <A, I>(schema: Schema.Schema<A, I>) => Schema.optionalWith(schema, { exact: true })

/** The fields of `values` that are not null: what an answer carries of values that may be unset. */
export const unlessNull = <K extends string, A>(values: Readonly<Record<K, A | null>>): Partial<Record<K, A>> => {
  const set: Partial<Record<K, A>> = {}
  for (const [key, value] of Object.entries<A | null>(values)) {
    if (value !== null) set[key as K] = value
  }
  return set
}
