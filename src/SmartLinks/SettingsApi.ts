import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "../Auth/Authentication.ts"
import { LoginsBusy } from "../Auth/AuthErrors.ts"
import { PlanWithoutAnalytics, ReportsBusy, ReportTooSlow, WindowEndWithoutStart, WindowInvalid } from "../Analytics/AnalyticsErrors.ts"
import { WindowParams } from "../Analytics/AnalyticsApi.ts"
import { DomainNotFound } from "../Domains/DomainErrors.ts"
import { LinkNotFound } from "../Links/LinkErrors.ts"
import { BodyTimeout, BodyTooLarge } from "../Platform/ApiError.ts"
import { PathId } from "../Platform/Coded.ts"
import { answers, answersInvalidInput } from "../Platform/Failure.ts"
import { SettingsBody } from "./SettingsBody.ts"
import { DestinationReport, SettingsList } from "./SettingsModel.ts"

const domainId = HttpApiSchema.param("domain_id", PathId(10101))
const linkId = HttpApiSchema.param("link_id", PathId(10150))

/** Every code a settings body can be refused with. */
const SETTINGS_PROBLEMS = [
  10700, 10701, 10702, 10703, 10704, 10705, 10706, 10707, 10708, 10709, 10710, 10711, 10712, 10713, 10714, 10715, 10716, 10717,
  10718, 10719, 10153
] as const

/** Smart-link settings and the destinations report: extensions beyond the specification (README, "Smart links (extension)"). */
export class SettingsApi extends HttpApiGroup.make("smartLinks")
  .annotate(OpenApi.Title, "Smart links (extension)")
  .annotate(OpenApi.Description, "Per-link targeting rules, A/B splits, password, click limit, expiry and previews; clicks per destination")
  .add(
    HttpApiEndpoint.get("getSettings")`/${domainId}/links/${linkId}/settings`
      .addSuccess(SettingsList)
      .addError(answers(DomainNotFound))
      .addError(answers(LinkNotFound))
      .annotate(OpenApi.Summary, "Get a link's smart settings")
      .annotate(OpenApi.Description, "The link's settings; the password never, only password_set. Whoever may read the link (E11).")
  )
  .add(
    HttpApiEndpoint.put("putSettings")`/${domainId}/links/${linkId}/settings`
      .setPayload(SettingsBody)
      .addError(BodyTooLarge)
      .addError(BodyTimeout)
      .addSuccess(SettingsList)
      .addError(answers(DomainNotFound))
      .addError(answers(LinkNotFound))
      .addError(answers(LoginsBusy))
      .addError(answersInvalidInput(...SETTINGS_PROBLEMS))
      .annotate(OpenApi.Summary, "Replace a link's smart settings")
      .annotate(
        OpenApi.Description,
        "Replaces every setting (a field left out is cleared; {} clears all) and answers the stored settings. " +
          "Whoever may update the link (E12). Every problem is reported with its code and the rule and field it is in."
      )
  )
  .add(
    HttpApiEndpoint.get("destinations")`/${domainId}/links/${linkId}/clicks/destinations`
      .setUrlParams(WindowParams)
      .addSuccess(DestinationReport)
      .addError(answers(PlanWithoutAnalytics))
      .addError(answers(DomainNotFound))
      .addError(answers(LinkNotFound))
      .addError(answers(ReportsBusy))
      .addError(answers(ReportTooSlow))
      .addError(answers(WindowInvalid))
      .addError(answers(WindowEndWithoutStart))
      .addError(answersInvalidInput(10500, 10501))
      .annotate(OpenApi.Summary, "Link clicks per destination")
      .annotate(
        OpenApi.Description,
        "Non-bot clicks and unique visitors per destination served (rule, split or the link's URL) over the window " +
          "of the link reports (default: the last 7 days and today), most first. Team, Business and Enterprise plans."
      )
  )
  .middleware(Authentication) {}
