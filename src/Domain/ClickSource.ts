import Bowser from "bowser"
import { isbot } from "isbot"

export type Device = "desktop" | "mobile" | "tablet" | "bot" | "other"

/** Longer user agents are cut before parsing and storing: real ones are far shorter. */
export const MAX_USER_AGENT = 512
const MAX_REFERER = 2048

export const truncateUserAgent = (userAgent: string | undefined): string => (userAgent ?? "").slice(0, MAX_USER_AGENT)

/** Device class of a user agent; bots (isbot's list, curl and scripts included) are their own class. */
export const classifyUserAgent = (userAgent: string | undefined): { readonly device: Device; readonly bot: boolean } => {
  const ua = truncateUserAgent(userAgent)
  if (ua.trim() === "") return { device: "other", bot: false }
  if (isbot(ua)) return { device: "bot", bot: true }
  try {
    const type = Bowser.parse(ua).platform.type
    if (type === "bot") return { device: "bot", bot: true }
    return { device: type === "desktop" || type === "mobile" || type === "tablet" ? type : "other", bot: false }
  } catch {
    return { device: "other", bot: false }
  }
}

/** The lower-cased host of an http(s) Referer, or "direct" when there is none to speak of. */
export const referrerHost = (referer: string | undefined): string => {
  if (referer === undefined || referer === "" || referer.length > MAX_REFERER) return "direct"
  try {
    const url = new URL(referer)
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") return "direct"
    return url.hostname.toLowerCase()
  } catch {
    return "direct"
  }
}
