import { Schema } from "effect"
import { Unset } from "../Platform/Unset.ts"

/**
 * A link's smart settings (an extension of ours) as stored and answered. The request body is read by
 * `SettingsRules.ts` (as `SettingsBody.ts` decodes it), which reports every problem with its own
 * code; these schemas describe the stored document, the answer and (`SettingsInput`) the body's type.
 */

export const DEVICES = ["desktop", "mobile", "tablet"] as const
export const OPERATING_SYSTEMS = ["ios", "android", "windows", "macos", "linux"] as const
export const BROWSERS = ["chrome", "safari", "firefox", "edge", "opera", "samsung"] as const

export const MAX_RULES = 20
export const MAX_CONDITIONS = 10
/** Accepted values of one condition (a list of countries, CIDRs, ...). */
export const MAX_CONDITION_VALUES = 100
export const MIN_SPLIT = 2
export const MAX_SPLIT = 10
export const MIN_PASSWORD = 8
export const MAX_PASSWORD = 128
export const MAX_TITLE = 300
export const MAX_DESCRIPTION = 1000
export const MAX_PLACE_NAME = 200
export const MAX_QUERY_NAME = 100
export const MAX_QUERY_VALUE = 1000

const values = <A, I>(item: Schema.Schema<A, I>, description: string) =>
  Schema.optionalWith(Schema.Array(item).annotations({ description }), { exact: true })

export const Conditions = Schema.Struct({
  device: values(Schema.Literal(...DEVICES), "the visitor's device class"),
  os: values(Schema.Literal(...OPERATING_SYSTEMS), "the visitor's operating system"),
  browser: values(Schema.Literal(...BROWSERS), "the visitor's browser"),
  language: values(Schema.String, "BCP 47 tags; `en` matches `en-GB`; matched against the visitor's preferred Accept-Language"),
  country: values(Schema.String, "ISO 3166-1 alpha-2 codes, by the GeoIP database"),
  region: values(Schema.String, "region names as the GeoIP database has them, case ignored"),
  city: values(Schema.String, "city names as the GeoIP database has them, case ignored"),
  cidr: values(Schema.String, "IPv4 or IPv6 addresses or CIDRs of the client"),
  query: Schema.optionalWith(
    Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Literal(true)) }).annotations({
      description: "visitor query parameters: a value to equal, or true for present"
    }),
    { exact: true }
  ),
  after: Schema.optionalWith(Schema.Int.annotations({ description: "Unix seconds: from then on" }), { exact: true }),
  before: Schema.optionalWith(Schema.Int.annotations({ description: "Unix seconds: until then (exclusive)" }), { exact: true })
}).annotations({ identifier: "SmartConditions", description: "conditions that must all hold; at least one, at most 10" })
export type Conditions = typeof Conditions.Type

export const SplitEntry = Schema.Struct({
  url: Schema.String,
  weight: Schema.Int.annotations({ description: "0-100; the weights of a split sum to 100" })
}).annotations({ identifier: "SmartSplitEntry" })
export type SplitEntry = typeof SplitEntry.Type

export const Split = Schema.Array(SplitEntry).annotations({ description: "2-10 weighted destinations, sticky per visitor" })
export type Split = typeof Split.Type

export const Rule = Schema.Union(
  Schema.Struct({ when: Conditions, url: Schema.String }),
  Schema.Struct({ when: Conditions, split: Split })
).annotations({ identifier: "SmartRule", description: "conditions and a destination: a URL or a split" })
export type Rule = typeof Rule.Type

export const Preview = Schema.Struct({
  title: Unset(Schema.String),
  description: Unset(Schema.String),
  image: Unset(Schema.String)
}).annotations({ identifier: "SmartPreview", description: "social preview tags: image an http(s) URL" })
export type Preview = typeof Preview.Type

/** Every setting but the password: what is stored as a document, and answered. */
const storedFields = {
  rules: Unset(Schema.Array(Rule).annotations({ description: "at most 20, in order; the first whose conditions all hold wins" })),
  split: Unset(Split),
  max_clicks: Unset(Schema.Int.annotations({ description: "a positive integer" })),
  expires_at: Unset(Schema.Int.annotations({ description: "Unix seconds" })),
  expired_url: Unset(Schema.String),
  og: Unset(Preview)
}

export const StoredSettings = Schema.Struct(storedFields)
export type StoredSettings = typeof StoredSettings.Type

/** The settings as GET and PUT answer them: never the password, only whether there is one. */
export class Settings extends Schema.Class<Settings>("Settings")({
  ...storedFields,
  password_set: Schema.Boolean
}) {}

export class SettingsList extends Schema.Class<SettingsList>("SettingsList")({
  objects: Schema.Array(Settings)
}) {}

/** The PUT body as documented: the settings, the password as text (8-128 characters). */
export const SettingsInput = Schema.Struct({
  ...storedFields,
  password: Unset(Schema.String.annotations({ description: "8-128 characters; stored only as an argon2id hash" }))
}).annotations({ identifier: "SettingsInput" })

/** A served destination: its id in the `destinations` dictionary and its URL with the link's UTM fields. */
export const Target = Schema.Struct({ id: Schema.Int, url: Schema.String })
export type Target = typeof Target.Type

/**
 * Every destination URL of the settings, in one fixed order (each rule's URL or split entries, then
 * the split's): the stored targets are in this order, and the redirect path pairs them by it.
 */
export const destinationsOf = (settings: StoredSettings): ReadonlyArray<string> => {
  const urls: Array<string> = []
  for (const rule of settings.rules ?? []) {
    if ("url" in rule) urls.push(rule.url)
    else for (const entry of rule.split) urls.push(entry.url)
  }
  for (const entry of settings.split ?? []) urls.push(entry.url)
  return urls
}

export const DestinationRow = Schema.Struct({ url: Schema.String, count: Schema.Int, unique: Schema.Int }).annotations({
  identifier: "DestinationRow"
})

export class DestinationReport extends Schema.Class<DestinationReport>("DestinationReport")({
  objects: Schema.Array(DestinationRow)
}) {}
