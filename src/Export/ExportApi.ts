import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { PlanWithoutAnalytics } from "../Analytics/AnalyticsErrors.ts"
import { LAST_SECOND, UnixSecond } from "../Analytics/UnixSecond.ts"
import { Authentication } from "../Auth/Authentication.ts"
import { DomainNotFound } from "../Domains/DomainErrors.ts"
import { LinkNotFound } from "../Links/LinkErrors.ts"
import { coded, documentedInteger, PathId } from "../Platform/Coded.ts"
import { answers, answersInvalidInput } from "../Platform/Failure.ts"
import { ExportForbidden, ExportWindowMissing, ExportWindowReversed, ExportWindowTooLong } from "./ExportErrors.ts"

const domainId = HttpApiSchema.param("domain_id", PathId(10101))

const stamp = (code: 10830 | 10831) =>
  Schema.optional(documentedInteger(0, LAST_SECOND)(coded(code)(UnixSecond)))

export const ClicksExportParams = Schema.Struct({
  from_unix: stamp(10830),
  to_unix: stamp(10831),
  link_id: Schema.optional(PathId(10835, 400))
}).annotations({ parseOptions: { errors: "all" } })

/** A CSV file: RFC 4180, UTF-8, CRLF line ends, a header record first. */
const Csv = (description: string) => HttpApiSchema.Text({ contentType: "text/csv" }).annotations({ description })

const LINK_COLUMNS_TEXT =
  "id, alias, short_link, url, redirect_url, notes, tags (one name a line), status, redirect_type, user_id, created, modified, " +
  "archive_on, delete_on, clicks (non-bot, lifetime), last_clicked; times UTC as YYYY-MM-DD HH:MM:SS"

const CLICK_COLUMNS_TEXT =
  "engagement_id, clicked_at (UTC, YYYY-MM-DD HH:MM:SS), unix, link_id, alias, country, region, city, device, referrer, user_agent, qr, bot; " +
  "never the client address"

const SPREADSHEET_NOTE =
  "Text starting with =, +, -, @, tab or CR is written with a leading ' so that spreadsheets do not evaluate it. " +
  "Streamed: a failure after the first bytes cuts the connection, so a file that ends cleanly is complete."

/**
 * Extension (not in the specification): a domain's links, or its raw clicks over a window, as CSV,
 * streamed in chunks so that any size costs the service the same memory. For account admins and
 * admins of the domain.
 */
export class ExportApi extends HttpApiGroup.make("export")
  .annotate(OpenApi.Title, "Export (extension)")
  .annotate(OpenApi.Description, "Extension: a domain's links and raw clicks as CSV files, for account admins and admins of the domain")
  .add(
    HttpApiEndpoint.get("links_csv")`/${domainId}/export/links.csv`
      .addSuccess(Csv(`The domain's links that are not deleted, by id. Columns: ${LINK_COLUMNS_TEXT}. ${SPREADSHEET_NOTE}`))
      .addError(answers(DomainNotFound))
      .addError(answers(ExportForbidden))
      .annotate(OpenApi.Summary, "Export a domain's links as CSV (extension)")
      .annotate(OpenApi.Description, "Extension: every link of the domain that is not deleted (archived ones too), as a CSV attachment")
  )
  .add(
    HttpApiEndpoint.get("clicks_csv")`/${domainId}/export/clicks.csv`
      .setUrlParams(ClicksExportParams)
      .addSuccess(Csv(`The clicks of the window, oldest first, bots included and flagged. Columns: ${CLICK_COLUMNS_TEXT}. ${SPREADSHEET_NOTE}`))
      .addError(answers(PlanWithoutAnalytics))
      .addError(answers(DomainNotFound))
      .addError(answers(ExportForbidden))
      .addError(answers(LinkNotFound))
      .addError(answers(ExportWindowMissing))
      .addError(answers(ExportWindowReversed))
      .addError(answers(ExportWindowTooLong))
      .addError(answersInvalidInput(10830, 10831, 10835))
      .annotate(OpenApi.Summary, "Export a domain's raw clicks as CSV (extension)")
      .annotate(
        OpenApi.Description,
        "Extension: the domain's clicks from from_unix (inclusive) to to_unix (exclusive), both required, at most one calendar year; " +
          "link_id narrows them to one link of the domain. Needs the Team, Business or Enterprise plan"
      )
  )
  .middleware(Authentication) {}
