import { Effect } from "effect"
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto"
import { TokenSecret } from "../Auth/TokenStore.ts"

const IV_BYTES = 12
const TAG_BYTES = 16

/** A new signing secret, shown to its owner once. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString("base64url")}`

/** The hex HMAC-SHA256 of `<timestamp>.<body>` under the secret's UTF-8 bytes. */
export const sign = (secret: string, timestamp: number, body: string) =>
  createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")

/** `Webhook-Signature`: `t=<unix seconds>,v1=<hex>`, one `v1` per secret that signs (two during a rotation's grace). */
export const signatureHeader = (secrets: ReadonlyArray<string>, timestamp: number, body: string) =>
  [`t=${timestamp}`, ...secrets.map((secret) => `v1=${sign(secret, timestamp, body)}`)].join(",")

/**
 * Webhook secrets at rest: AES-256-GCM under a key derived (HKDF-SHA256) from the data key (TOKEN_SECRET
 * or DATA_DIR/data-key, never in the database; a token-secret rotation leaves it), so a copy of the
 * database alone reads none. Stored as IV, tag and ciphertext in one value. `open` answers undefined
 * for a value sealed under another key (an instance with another data key).
 */
export class WebhookSecrets extends Effect.Service<WebhookSecrets>()("WebhookSecrets", {
  effect: Effect.map(TokenSecret, (tokenSecret) => {
    const key = Buffer.from(hkdfSync("sha256", tokenSecret.dataKey, Buffer.alloc(0), "webhook secrets", 32))
    return {
      seal: (secret: string): Buffer => {
        const iv = randomBytes(IV_BYTES)
        const cipher = createCipheriv("aes-256-gcm", key, iv)
        const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()])
        return Buffer.concat([iv, cipher.getAuthTag(), sealed])
      },
      open: (stored: Uint8Array): string | undefined => {
        const bytes = Buffer.from(stored)
        try {
          const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES))
          decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
          return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8")
        } catch {
          return undefined
        }
      }
    }
  })
}) {}
