import { describe, expect, it } from "@effect/vitest"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"
import { Api } from "../src/Api.ts"
import { routeLabeller } from "../src/Platform/RouteLabels.ts"

const id = HttpApiSchema.param("id", Schema.String)

// A parameterised route declared before a fixed one it also matches: the first in order labels both.
const Items = HttpApiGroup.make("items")
  .add(HttpApiEndpoint.get("item")`/items/${id}`)
  .add(HttpApiEndpoint.get("search", "/items/search"))
  .add(HttpApiEndpoint.post("create", "/items"))
  .add(HttpApiEndpoint.get("list", "/items"))
  .add(HttpApiEndpoint.get("health", "/healthz"))

describe("routeLabeller", () => {
  const labelOf = routeLabeller(HttpApi.make("test").add(Items))

  it("labels a fixed path by its method and path", () => {
    expect(labelOf("GET", "/healthz")).toBe("/healthz")
    expect(labelOf("GET", "/items")).toBe("/items")
    expect(labelOf("POST", "/items")).toBe("/items")
  })

  it("labels a path with the first route in the API's order that matches it", () => {
    expect(labelOf("GET", "/items/search")).toBe("/items/:id")
    expect(labelOf("GET", "/items/42")).toBe("/items/:id")
  })

  it("matches a trailing slash, and nothing of another method or path", () => {
    expect(labelOf("GET", "/healthz/")).toBe("/healthz")
    expect(labelOf("GET", "/items/42/")).toBe("/items/:id")
    expect(labelOf("DELETE", "/items")).toBe("unmatched")
    expect(labelOf("POST", "/healthz")).toBe("unmatched")
    expect(labelOf("GET", "/healthz/x")).toBe("unmatched")
    expect(labelOf("GET", "/HEALTHZ")).toBe("unmatched")
  })

  it("labels the pages served beside the API as themselves, for GET only and spelled exactly", () => {
    const withPages = routeLabeller(HttpApi.make("test").add(Items), ["/docs", "/items/openapi.json"])
    const expected = [
      ["GET", "/docs", "/docs"],
      ["GET", "/items/openapi.json", "/items/openapi.json"],
      ["GET", "/items", "/items"],
      ["GET", "/docs/", "unmatched"],
      ["POST", "/docs", "unmatched"]
    ] as const
    for (const [method, path, label] of expected) expect(withPages(method, path), `${method} ${path}`).toBe(label)
    expect(labelOf("GET", "/docs")).toBe("unmatched")
  })

  it("labels the service's fixed routes as themselves", () => {
    const labelApi = routeLabeller(Api)
    expect(labelApi("GET", "/healthz")).toBe("/healthz")
    expect(labelApi("GET", "/api/v4/domains")).toBe("/api/v4/domains")
    expect(labelApi("GET", "/api/v4/domains/7")).toBe("/api/v4/domains/:domain_id")
  })
})
