import { Schema } from "effect"
import { Link } from "../Links/Link.ts"
import { Meta } from "../Platform/Pagination.ts"

/** The rows of the analytics reports; unknown places are null. */
export const DayRow = Schema.Struct({ date: Schema.String, unix_date: Schema.Int, count: Schema.Int, scan_count: Schema.Int })
export const CountryRow = Schema.Struct({ country: Schema.NullOr(Schema.String), count: Schema.Int })
export const RegionRow = Schema.Struct({ country: Schema.NullOr(Schema.String), region: Schema.NullOr(Schema.String), count: Schema.Int })
export const CityRow = Schema.Struct({
  country: Schema.NullOr(Schema.String),
  region: Schema.NullOr(Schema.String),
  city: Schema.NullOr(Schema.String),
  count: Schema.Int
})
export const DeviceRow = Schema.Struct({ device: Schema.String, count: Schema.Int })
export const ReferrerRow = Schema.Struct({ referrer: Schema.String, count: Schema.Int })
export const HourRow = Schema.Struct({ hour: Schema.Int, count: Schema.Int, scan_count: Schema.Int })
export type DayRow = typeof DayRow.Type
export type CountryRow = typeof CountryRow.Type
export type RegionRow = typeof RegionRow.Type
export type CityRow = typeof CityRow.Type
export type DeviceRow = typeof DeviceRow.Type
export type ReferrerRow = typeof ReferrerRow.Type
export type HourRow = typeof HourRow.Type

/** E23, answered at the top level: lifetime figures without a window, the window's count with one. */
export const LinkTotals = Schema.Union(
  Schema.Struct({ total: Schema.Int, unique: Schema.Int, scan_count: Schema.Int }).annotations({
    description: "without from_unix/to_unix: the link's lifetime figures"
  }),
  Schema.Struct({ count: Schema.Int }).annotations({ description: "with from_unix/to_unix: the clicks in the window" })
)

/** R1: one click as recorded, without the client address; `engagement_id` (the real API's name) identifies it. */
export const RawClick = Schema.Struct({
  engagement_id: Schema.String,
  created: Schema.Int,
  country: Schema.NullOr(Schema.String),
  region: Schema.NullOr(Schema.String),
  city: Schema.NullOr(Schema.String),
  device: Schema.String,
  referrer: Schema.String,
  user_agent: Schema.String,
  qr: Schema.Boolean,
  bot: Schema.Boolean
})

/** E16: a link without `notify_on_click`, with its lifetime clicks and the time of the last one. */
export const ClickedLink = Schema.Struct({
  ...Link.fields,
  lifetime_count: Schema.Int,
  last_clicked: Schema.NullOr(Schema.String)
}).omit("notify_on_click")

/** Full URLs of the first, last, previous and next pages of the same request. */
export class PageLinks extends Schema.Class<PageLinks>("PageLinks")({
  first: Schema.String,
  last: Schema.String,
  previous: Schema.NullOr(Schema.String),
  next: Schema.NullOr(Schema.String)
}) {}

/** A paginated analytics answer. */
export const Report = <A, I>(row: Schema.Schema<A, I>) =>
  Schema.Struct({ objects: Schema.Array(row), links: PageLinks, meta: Meta })
