/** A whole number of the environment, or `fallback` when it is unset or empty; anything else stops the bench. */
export const numberFromEnv = (name: string, fallback: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got ${raw}`)
  return value
}
