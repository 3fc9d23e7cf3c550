/**
 * Every error code the service can return: those of the real API and ours (docs/DECISIONS.md, Errors).
 * E31 serves this table and every failure is built from it.
 */
export interface ErrorEntry {
  readonly description: string
  readonly message: string
  readonly status: ErrorStatus
}

export type ErrorStatus = 400 | 401 | 403 | 404 | 408 | 413 | 500 | 503

const entry = (status: ErrorStatus, description: string, message: string): ErrorEntry => ({ status, description, message })

export const ErrorCatalogue = {
  10000: entry(401, "auth invalid token", "invalid token"),
  10001: entry(401, "auth user may not be registered", "%1$s may not be registered"),
  10003: entry(403, "insufficient privileges", "Unauthorized"),
  10100: entry(400, "link url invalid", "url is invalid"),
  10101: entry(404, "link domain id invalid", "domain_id is invalid"),
  10102: entry(400, "link alias invalid", "alias is invalid"),
  10103: entry(400, "link alias too long", "alias too long"),
  10104: entry(400, "link alias not allowed", "alias is not allowed"),
  10105: entry(400, "link notes invalid", "notes invalid"),
  10106: entry(400, "link notes too long", "notes too long"),
  10107: entry(400, "link tags invalid", "One or more of your tags are invalid"),
  10108: entry(400, "link utm template id invalid", "utm_template_id is invalid"),
  10109: entry(400, "link utm template not found", "UTM template not found"),
  10110: entry(400, "link utm template item invalid", "One or more of your utm field keys/values are invalid"),
  10111: entry(400, "link delete on invalid", "delete_on is invalid"),
  10112: entry(400, "link delete on in the past", "delete_on must be after current time"),
  10113: entry(400, "link archive on invalid", "archive_on is invalid"),
  10114: entry(400, "link archive on in the past", "archive_on must be after current time"),
  10115: entry(400, "link redirect type invalid", "redirect_type is invalid"),
  10116: entry(400, "link archive on and delete on mutually exclusive", "setting both archive_on and delete_on is not allowed"),
  10120: entry(400, "link search page invalid", "page is invalid"),
  10121: entry(400, "link search keyword invalid", "keyword is invalid"),
  10122: entry(400, "link search url invalid", "url is invalid"),
  10123: entry(400, "link search order invalid", "order is invalid"),
  10130: entry(400, "link modify operation invalid", "Operation %1$s not supported"),
  10131: entry(400, "link modify path invalid", "Modifying path %1$s not supported"),
  10132: entry(400, "link modify url invalid", "/url value invalid"),
  10133: entry(400, "link modify alias invalid", "/alias value invalid"),
  10134: entry(400, "link modify notes invalid", "/notes value invalid"),
  10135: entry(400, "link modify notes too long", "/notes value too long"),
  10140: entry(400, "link modify alias not available", "%1$s"),
  10141: entry(500, "link modify save failed", "%1$s"),
  10142: entry(500, "link create save failed", "%1$s"),
  10143: entry(400, "link suggestions not found", "%1$s"),
  10144: entry(400, "plan quota of Links, Dynamic Links or Pages exhausted", "You have exhausted the limits of your current plan"),
  10150: entry(404, "link not found", "link not found"),
  10151: entry(404, "route not found", "no route for %1$s %2$s"),
  10152: entry(413, "request body too large", "request body exceeds %1$s bytes"),
  10153: entry(400, "request body invalid", "%1$s"),
  10154: entry(408, "request body timeout", "the request body did not arrive in time"),
  10160: entry(404, "group not found", "group_id is invalid"),
  10200: entry(400, "utm domain id missing", "domain_id is required"),
  10201: entry(400, "utm domain id invalid", "domain_id is invalid"),
  10300: entry(400, "tags domain id missing", "domain_id is required"),
  10301: entry(400, "tags domain id invalid", "domain_id is invalid"),
  10302: entry(400, "tags search parameter invalid", "search parameter is invalid"),
  10303: entry(400, "tags name missing", "tag name is required"),
  10304: entry(400, "tags name invalid", "tag name is invalid"),
  10305: entry(400, "tags shared invalid", "shared is invalid"),
  10306: entry(400, "tags notes invalid", "notes is invalid"),
  10307: entry(400, "tags notes too long", "notes too long"),
  10308: entry(400, "tags name already exists", "tag name already exists"),
  10400: entry(400, "domain name invalid", "domain is invalid"),
  10401: entry(400, "domain already exists", "domain %1$s already exists"),
  10402: entry(400, "domain url_404 invalid", "url_404 must be a full http or https URL"),
  10403: entry(400, "domain homepage invalid", "homepage must be a full http or https URL"),
  10404: entry(400, "domain update operation not supported", "Operation %1$s not supported"),
  10405: entry(400, "domain update path not supported", "Modifying path %1$s not supported"),
  10406: entry(400, "domain update value invalid", "invalid value for %1$s"),
  10407: entry(400, "domain default invalid", "default must be a boolean"),
  10408: entry(400, "list page invalid (domains, users, groups)", "page is invalid"),
  10500: entry(400, "analytics from_unix invalid", "from_unix is invalid"),
  10501: entry(400, "analytics to_unix invalid", "to_unix is invalid"),
  10502: entry(400, "analytics range invalid", "the range must not exceed one year and to_unix must be after from_unix"),
  10503: entry(400, "analytics to_unix needs from_unix", "to_unix requires from_unix"),
  10504: entry(403, "plan has no analytics", "analytics need the Team, Business or Enterprise plan"),
  10505: entry(400, "analytics page invalid", "page is invalid"),
  10506: entry(400, "analytics user_id invalid", "user_id is invalid"),
  10507: entry(400, "analytics filter value invalid", "%1$s is invalid"),
  10508: entry(503, "analytics report too slow", "the report did not finish within the time limit; narrow the window or the filters"),
  10600: entry(400, "QR format invalid", "format must be png, svg or eps"),
  10700: entry(400, "smart-link settings invalid", "%1$s"),
  10701: entry(400, "smart-link rules invalid", "%1$s: rules must be an array of at most 20 rules"),
  10702: entry(400, "smart-link rule invalid", "%1$s: a rule is {when, url} or {when, split}"),
  10703: entry(400, "smart-link rule conditions invalid", "%1$s: when must be an object of 1-10 conditions"),
  10704: entry(400, "smart-link device condition invalid", "%1$s: device values are desktop, mobile, tablet"),
  10705: entry(400, "smart-link os condition invalid", "%1$s: os values are ios, android, windows, macos, linux"),
  10706: entry(400, "smart-link browser condition invalid", "%1$s: browser values are chrome, safari, firefox, edge, opera, samsung"),
  10707: entry(400, "smart-link language condition invalid", "%1$s: language values are BCP 47 tags (en, en-GB)"),
  10708: entry(400, "smart-link country condition invalid", "%1$s: country values are ISO 3166-1 alpha-2 codes"),
  10709: entry(400, "smart-link region condition invalid", "%1$s: region values are names of 1-200 characters"),
  10710: entry(400, "smart-link cidr condition invalid", "%1$s: values are IPv4 or IPv6 addresses or CIDRs"),
  10711: entry(400, "smart-link query condition invalid", "%1$s: query is {name: value}, each value a string or true"),
  10712: entry(400, "smart-link time condition invalid", "%1$s: after and before are Unix seconds, after before before"),
  10713: entry(400, "smart-link destination url invalid", "%1$s: not an acceptable http(s) URL"),
  10714: entry(400, "smart-link split invalid", "%1$s: a split is 2-10 {url, weight} with integer weights summing to 100"),
  10715: entry(400, "smart-link password invalid", "%1$s: the password must have 8-128 characters"),
  10716: entry(400, "smart-link max_clicks invalid", "%1$s: max_clicks must be a positive integer"),
  10717: entry(400, "smart-link expires_at invalid", "%1$s: expires_at must be Unix seconds in the future"),
  10718: entry(400, "smart-link og invalid", "%1$s: og is {title, description, image}, strings, image an http(s) URL"),
  10719: entry(400, "smart-link city condition invalid", "%1$s: city values are names of 1-200 characters"),
  10900: entry(503, "rate limit exceeded", "rate limit exceeded"),
  10901: entry(503, "service busy", "too many concurrent requests of this kind, try again shortly"),
  10902: entry(503, "service unavailable", "the database is unavailable, try again shortly"),
  10903: entry(503, "service stopping", "this instance is stopping, try again (another instance answers)"),
  10999: entry(500, "internal error", "internal error")
} as const satisfies Record<number, ErrorEntry>

export type ErrorCode = keyof typeof ErrorCatalogue

export const isErrorCode = (code: number): code is ErrorCode => Object.hasOwn(ErrorCatalogue, code)

/** Fills `%1$s`, `%2$s`, ... in order. */
export const formatMessage = (template: string, args: ReadonlyArray<string>): string =>
  template.replace(/%(\d+)\$s/g, (_, n: string) => args[Number(n) - 1] ?? "")
