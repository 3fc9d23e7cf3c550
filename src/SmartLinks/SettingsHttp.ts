import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { CurrentUser } from "../Auth/Authentication.ts"
import { Settings } from "./Settings.ts"

export const SettingsHttpLive = HttpApiBuilder.group(Api, "smartLinks", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    return handlers
      .handle("getSettings", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => settings.get(caller, path.domain_id, path.link_id)).pipe(
          Effect.map((found) => ({ objects: [found] }))
        )
      )
      .handle("putSettings", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => settings.put(caller, path.domain_id, path.link_id, payload)).pipe(
          Effect.map((stored) => ({ objects: [stored] }))
        )
      )
      .handle("destinations", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => settings.destinations(caller, path.domain_id, path.link_id, urlParams)).pipe(
          Effect.map((rows) => ({ objects: rows }))
        )
      )
  })
)
