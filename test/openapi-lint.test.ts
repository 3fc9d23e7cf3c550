import { describe, expect, it } from "@effect/vitest"
import { lintOpenApi } from "./support/OpenApiLint.ts"

// The same run as `npm run lint:openapi`: both documents the service serves, redocly's recommended rules.
describe("the OpenAPI documents", () => {
  it("pass redocly lint with the recommended rules: no error", async () => {
    const { code, output, report } = await lintOpenApi("json")
    // One JSON report per document, one after the other.
    const errors = [...report.matchAll(/"totals":\s*\{\s*"errors":\s*(\d+)/g)].map((match) => Number(match[1]))
    expect(errors, output).toEqual([0, 0])
    expect(code, output).toBe(0)
  }, 120_000)
})
