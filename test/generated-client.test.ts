import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import createClient from "openapi-fetch"
import openapiTS, { astToString } from "openapi-typescript"
import ts from "typescript"
import { isPlainObject } from "../src/Links/InputValues.ts"
import { call, newUser, numberAt } from "./support/Http.ts"
import { BaseUrl, TestServer } from "./support/TestServer.ts"

const ROOT = fileURLToPath(new URL("..", import.meta.url))

/**
 * A program written against the generated types: the calls a client makes must compile, and each
 * wrongly typed body, parameter or read of an answer is marked `@ts-expect-error`, so a wrong type
 * the types accepted would leave an unused directive, itself an error. Its `exercise` is also run
 * against the service.
 */
const CLIENT = `import type createClient from "openapi-fetch"
import type { paths } from "./api.js"

export const exercise = async (create: typeof createClient, baseUrl: string, token: string, domainId: number) => {
  const client = create<paths>({ baseUrl, headers: { authorization: "Bearer " + token } })
  const link = await client.POST("/api/v4/{domain_id}/links", {
    params: { path: { domain_id: domainId } },
    body: { url: "https://example.com/generated", redirect_type: 307, rand_alias_length: 9, notes: "typed", tags: [{ name: "generated" }] }
  })
  const linkId: number = link.data?.objects[0]?.id ?? 0
  // @ts-expect-error an id is an integer
  const wrongId: string = link.data?.objects[0]?.id ?? ""
  void wrongId
  const search = await client.GET("/api/v4/{domain_id}/links", {
    params: { path: { domain_id: domainId }, query: { keyword: "generated", order: "latest", page: 1 } }
  })
  const domain = await client.GET("/api/v4/domains/{domain_id}", { params: { path: { domain_id: domainId } } })
  const domainName: string = domain.data?.objects[0]?.domain ?? ""
  const settings = await client.PUT("/api/v4/{domain_id}/links/{link_id}/settings", {
    params: { path: { domain_id: domainId, link_id: linkId } },
    body: {
      rules: [
        { when: { device: ["mobile"], country: ["de"] }, url: "https://example.com/mobile" },
        { when: { query: { utm_source: "news", preview: true } }, split: [{ url: "https://example.com/a", weight: 60 }, { url: "https://example.com/b", weight: 40 }] }
      ],
      max_clicks: 1000,
      password: "a long enough password"
    }
  })
  const passwordSet: boolean = settings.data?.objects[0]?.password_set ?? false
  const updated = await client.PATCH("/api/v4/{domain_id}/links/{link_id}", {
    params: { path: { domain_id: domainId, link_id: linkId } },
    body: [{ path: "/notes", value: "patched" }, { op: "replace", path: "/delete_on", value: null }]
  })
  return { link: link.data, search: search.data, domainName, passwordSet, updated: updated.data }
}

export const refused = async (client: ReturnType<typeof createClient<paths>>) => {
  const path = { domain_id: 1 }
  // @ts-expect-error url is a string
  await client.POST("/api/v4/{domain_id}/links", { params: { path }, body: { url: 42 } })
  // @ts-expect-error redirect_type is 301 or 307
  await client.POST("/api/v4/{domain_id}/links", { params: { path }, body: { url: "https://example.com/", redirect_type: "banana" } })
  // @ts-expect-error url is required
  await client.POST("/api/v4/{domain_id}/links", { params: { path }, body: { alias: "a" } })
  // @ts-expect-error tags are objects with a name
  await client.POST("/api/v4/{domain_id}/links", { params: { path }, body: { url: "https://example.com/", tags: ["a"] } })
  // @ts-expect-error domain_id is an integer
  await client.POST("/api/v4/{domain_id}/links", { params: { path: { domain_id: "1" } }, body: { url: "https://example.com/" } })
  // @ts-expect-error order is oldest or latest
  await client.GET("/api/v4/{domain_id}/links", { params: { path, query: { order: "newest" } } })
  // @ts-expect-error page is an integer
  await client.GET("/api/v4/{domain_id}/links", { params: { path, query: { page: "2" } } })
  // @ts-expect-error domain_id is an integer
  await client.GET("/api/v4/domains/{domain_id}", { params: { path: { domain_id: "1" } } })
  // @ts-expect-error the path parameter is required
  await client.GET("/api/v4/domains/{domain_id}", {})
  // @ts-expect-error the domain name is required
  await client.POST("/api/v4/domains", { body: { default: true } })
  const link = { domain_id: 1, link_id: 1 }
  // @ts-expect-error an alias is a string
  await client.PATCH("/api/v4/{domain_id}/links/{link_id}", { params: { path: link }, body: [{ path: "/alias", value: 5 }] })
  // @ts-expect-error no such path
  await client.PATCH("/api/v4/{domain_id}/links/{link_id}", { params: { path: link }, body: [{ path: "/status", value: "active" }] })
  const settings = "/api/v4/{domain_id}/links/{link_id}/settings" as const
  // @ts-expect-error a weight is an integer
  await client.PUT(settings, { params: { path: link }, body: { split: [{ url: "https://example.com/a", weight: "50" }] } })
  // @ts-expect-error no such device
  await client.PUT(settings, { params: { path: link }, body: { rules: [{ when: { device: ["phone"] }, url: "https://example.com/" }] } })
  // @ts-expect-error a rule needs its conditions
  await client.PUT(settings, { params: { path: link }, body: { rules: [{ url: "https://example.com/" }] } })
  // @ts-expect-error the password is text
  await client.PUT(settings, { params: { path: link }, body: { password: 12345678 } })
  // @ts-expect-error max_clicks is an integer
  await client.PUT(settings, { params: { path: link }, body: { max_clicks: "10" } })
  // @ts-expect-error the password is text
  await client.POST("/api/v4/validate_login", { body: { email: "a@example.com", password: 1234 } })
}
`

/** The errors `tsc` reports for the program, with the compiler options of the project (strict). */
const diagnosticsOf = (file: string): ReadonlyArray<string> => {
  const program = ts.createProgram([file], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    types: [],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUnusedLocals: true,
    noEmit: true,
    skipLibCheck: true,
    paths: { "openapi-fetch": [join(ROOT, "node_modules", "openapi-fetch", "dist", "index.d.mts")] }
  })
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => `${diagnostic.file?.fileName ?? ""}:${diagnostic.start ?? 0} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`)
}

const isExercise = (
  value: unknown
): value is (create: typeof createClient, baseUrl: string, token: string, domainId: number) => Promise<Record<string, unknown>> =>
  typeof value === "function"

describe("a client generated from /api/v4/openapi.json", () => {
  layer(TestServer(), { excludeTestServices: true })((it) => {
    it.effect("compiles correct calls, refuses wrongly typed bodies and parameters, and reads the answers", () =>
      Effect.gen(function* () {
        const served = yield* call("GET", "/api/v4/openapi.json")
        expect(served.status).toBe(200)
        const directory = mkdtempSync(join(tmpdir(), "generated-client-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(directory, { recursive: true, force: true })))
        const types = astToString(yield* Effect.promise(() => openapiTS(served.text)))
        // A declaration file, as a client keeps it: its own checks are skipped (skipLibCheck), its use is not.
        writeFileSync(join(directory, "api.d.ts"), types)
        writeFileSync(join(directory, "package.json"), JSON.stringify({ type: "module" }))
        const client = join(directory, "client.ts")
        writeFileSync(client, CLIENT)
        expect(diagnosticsOf(client)).toEqual([])

        const user = yield* newUser()
        const domain = yield* call("POST", "/api/v4/domains", { token: user.token, body: { domain: `generated${Date.now()}.example` } })
        const domainId = numberAt(domain.body, "objects", 0, "id")
        const module: unknown = yield* Effect.promise(() => import(pathToFileURL(client).href))
        const exercise = isPlainObject(module) ? module.exercise : undefined
        if (!isExercise(exercise)) return yield* Effect.dieMessage("the client program exports no exercise")
        const baseUrl = yield* BaseUrl
        const answers = yield* Effect.promise(() => exercise(createClient, baseUrl, user.token, domainId))
        expect(answers).toMatchObject({
          link: { new_link: 1, objects: [{ url: "https://example.com/generated", redirect_type: 307, tags: [{ name: "generated" }] }] },
          search: { objects: [{ url: "https://example.com/generated" }] },
          domainName: expect.stringMatching(/^generated\d+\.example$/),
          passwordSet: true,
          updated: { objects: [{ notes: "patched" }] }
        })
      }).pipe(Effect.scoped),
      60_000
    )
  })
})
