import { Schema } from "effect"
import { coded } from "./Coded.ts"

/** The `page` query parameter of the lists without a code of their own (domains, users, groups): 10408. */
export const ListPage = Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), Schema.lessThanOrEqualTo(1_000_000), coded(10408))

export class Meta extends Schema.Class<Meta>("Meta")({
  current_page: Schema.Int,
  previous_page: Schema.NullOr(Schema.Int),
  next_page: Schema.NullOr(Schema.Int),
  last_page: Schema.Int,
  from: Schema.NullOr(Schema.Int),
  to: Schema.NullOr(Schema.Int),
  per_page: Schema.Int,
  total: Schema.Int,
  path: Schema.String
}) {}

export interface PageRequest {
  readonly page: number
  readonly perPage: number
}

export const offsetOf = ({ page, perPage }: PageRequest) => (page - 1) * perPage

/** The `meta` block every list carries, for a page of `count` rows out of `total`. */
export const makeMeta = (request: PageRequest, count: number, total: number, path: string): Meta => {
  const lastPage = Math.max(1, Math.ceil(total / request.perPage))
  const from = count === 0 ? null : offsetOf(request) + 1
  return new Meta({
    current_page: request.page,
    previous_page: request.page > 1 ? request.page - 1 : null,
    next_page: request.page < lastPage ? request.page + 1 : null,
    last_page: lastPage,
    from,
    to: from === null ? null : from + count - 1,
    per_page: request.perPage,
    total,
    path
  })
}

/** Every list's page size: 50 in version 4, 20 in version 3. */
export const PAGE_SIZE_V4 = 50
export const PAGE_SIZE_V3 = 20
