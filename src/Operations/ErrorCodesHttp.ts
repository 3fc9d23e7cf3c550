import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { ErrorCodeEntry } from "./ErrorCodesApi.ts"
import { ErrorCatalogue } from "../Platform/ErrorCatalogue.ts"

const entries = Object.entries(ErrorCatalogue).map(
  ([code, entry]) => new ErrorCodeEntry({ code: Number(code), description: entry.description, message: entry.message })
)

export const ErrorCodesHttpLive = HttpApiBuilder.group(Api, "errorCodes", (handlers) =>
  handlers.handle("list", () => Effect.succeed({ objects: entries }))
)
