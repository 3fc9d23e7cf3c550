import { createHash, createHmac, timingSafeEqual } from "node:crypto"

/** How long a right answer lets a visitor through, in seconds. */
export const PASS_SECONDS = 24 * 60 * 60

/** One cookie per link, so a pass for one link is no pass for another. */
export const cookieName = (linkId: number) => `link_pass_${linkId}`

/** What a pass is bound to besides the link: the stored hash, so a new password voids every pass. */
export const passwordVersion = (storedHash: string) => createHash("sha256").update(storedHash).digest("base64url").slice(0, 16)

const mac = (key: Buffer, linkId: number, version: string, expires: number) =>
  createHmac("sha256", key).update(`${linkId}.${version}.${expires}`).digest()

/**
 * Signed passes for password links: `<expiry unix seconds>.<HMAC-SHA256 of link id, password version
 * and expiry>`, keyed by `key` (derived from the token secret, so instances sharing one accept each
 * other's passes).
 */
export const passwordCookies = (secret: Buffer) => {
  const key = createHmac("sha256", secret).update("links password pass").digest()
  return {
    /** The Set-Cookie value of a pass for the link, valid PASS_SECONDS from `nowMs`. */
    issue: (linkId: number, version: string, nowMs: number, secure: boolean) => {
      const expires = Math.floor(nowMs / 1000) + PASS_SECONDS
      const value = `${expires}.${mac(key, linkId, version, expires).toString("base64url")}`
      return `${cookieName(linkId)}=${value}; Max-Age=${PASS_SECONDS}; Path=/; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`
    },
    /** Whether the request's Cookie header holds an unexpired pass for this link and password. */
    valid: (cookieHeader: string | undefined, linkId: number, version: string, nowMs: number) => {
      if (cookieHeader === undefined) return false
      const name = `${cookieName(linkId)}=`
      for (const part of cookieHeader.split(";")) {
        const pair = part.trim()
        if (!pair.startsWith(name)) continue
        const [expiresText = "", signature = ""] = pair.slice(name.length).split(".")
        const expires = Number(expiresText)
        if (!/^\d{1,12}$/.test(expiresText) || expires * 1000 <= nowMs) continue
        const given = Buffer.from(signature, "base64url")
        const expected = mac(key, linkId, version, expires)
        if (given.length === expected.length && timingSafeEqual(given, expected)) return true
      }
      return false
    }
  }
}

export type PasswordCookies = ReturnType<typeof passwordCookies>
