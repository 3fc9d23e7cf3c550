import { readFileSync } from "node:fs"

/** The version in package.json (`src/Cli/` and `dist/Cli/` are both two folders below it). */
export const version = (): string => {
  const manifest: unknown = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"))
  return typeof manifest === "object" && manifest !== null && "version" in manifest && typeof manifest.version === "string"
    ? manifest.version
    : "unknown"
}
