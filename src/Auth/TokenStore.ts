import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option, Redacted } from "effect"
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"
import { AppConfig } from "../Config.ts"

export const ACCESS_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60

const sha256 = (value: string) => createHash("sha256").update(value).digest()
const token = (secret: Buffer, seed: Uint8Array) => createHmac("sha256", secret).update(seed).digest("base64url")
const randomToken = () => randomBytes(32).toString("base64url")

/** Hashes under which refresh and access tokens are stored and looked up. */
export const refreshTokenHash = sha256
export const accessTokenHash = sha256

/**
 * Whether `presented` is the token `secret` makes from its stored `seed`. Its row is found by hash
 * alone; this refuses a token made with another secret (another instance's, or this one's before
 * TOKEN_SECRET changed), so changing the secret ends every token made with the old one.
 */
export const madeWith = (secret: Buffer, seed: Uint8Array, presented: string) => timingSafeEqual(sha256(token(secret, seed)), sha256(presented))

export const newRefreshToken = () => {
  const value = randomToken()
  return { value, hash: sha256(value) }
}

/**
 * The key that turns a stored seed into its access token. From `TOKEN_SECRET`, or else generated once
 * into `DATA_DIR/token-secret`. Instances that share it hand out the same token on E2 and accept each
 * other's; a token made with another secret is refused (`madeWith`).
 */
export class TokenSecret extends Effect.Service<TokenSecret>()("TokenSecret", {
  effect: Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.tokenSecret)) return fixedSecret(Buffer.from(Redacted.value(config.tokenSecret.value), "utf8"))
    const file = tokenSecretFile(config.dataDir)
    if (!existsSync(file)) {
      mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
      writeFileSync(file, randomBytes(32).toString("base64url"), { flag: "wx", mode: 0o600 })
      chmodSync(file, 0o600)
      yield* Effect.logInfo(`generated a token secret in ${file}; set TOKEN_SECRET to share one between instances`)
    }
    const read = () => Buffer.from(readFileSync(file, "utf8").trim(), "utf8")
    const key = read()
    const dataKey = keepDataKey(config.dataDir)
    // The admin CLI's `token-secret rotate` replaces the file: a running instance takes the new key
    // at its next login, without a restart.
    let stamp = fileStamp(file)
    let latest = key
    return {
      dataKey,
      current: () => {
        const now = fileStamp(file)
        if (now !== undefined && now !== stamp) {
          latest = read()
          stamp = now
        }
        return latest
      }
    }
  })
}) {
  static readonly layerFromKey = (key: string) => Layer.succeed(TokenSecret, TokenSecret.make(fixedSecret(Buffer.from(key, "utf8"))))
}

/**
 * `dataKey`: the key of what must outlive a token-secret rotation (the click log's visitor hashes,
 * which unique-visitor counts join on); `current()`: the secret tokens are made with now.
 */
const fixedSecret = (key: Buffer) => ({ dataKey: key, current: () => key })

export const tokenSecretFile = (dataDir: string) => resolve(dataDir, "token-secret")
const dataKeyFile = (dataDir: string) => resolve(dataDir, "data-key")

/**
 * `DATA_DIR/data-key`, made once as a copy of the token secret of that time: keys derived from it
 * are the ones derived from the token secret before the file existed, and `token-secret rotate`
 * leaves it alone.
 */
const keepDataKey = (dataDir: string) => {
  const file = dataKeyFile(dataDir)
  if (!existsSync(file)) {
    const draft = `${file}.${process.pid}`
    writeFileSync(draft, readFileSync(tokenSecretFile(dataDir), "utf8").trim(), { mode: 0o600 })
    renameSync(draft, file)
  }
  return Buffer.from(readFileSync(file, "utf8").trim(), "utf8")
}

const fileStamp = (file: string) => {
  const stat = statSync(file, { throwIfNoEntry: false })
  return stat === undefined ? undefined : `${stat.ino}:${stat.mtimeMs}:${stat.size}`
}

/** Replaces the token secret file of `dataDir` with a new random secret, in one rename. */
export const replaceTokenSecret = (dataDir: string) => {
  const file = tokenSecretFile(dataDir)
  const draft = `${file}.${process.pid}`
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  if (existsSync(file)) keepDataKey(dataDir)
  writeFileSync(draft, randomBytes(32).toString("base64url"), { mode: 0o600 })
  renameSync(draft, file)
  return file
}

export interface IssuedToken {
  readonly accessToken: string
  readonly expires: number
}

/** A user as their credentials were when a login checked them. */
export interface CheckedUser {
  readonly id: number
  readonly password_hash: string
  readonly refresh_token_hash: Uint8Array
}

export class TokenStore extends Effect.Service<TokenStore>()("TokenStore", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* TokenSecret

    /**
     * The user's unexpired access token if this instance can rebuild it, otherwise a new one (24 h);
     * none if the user's password or refresh token changed, or the user was disabled, since the login
     * checked them. The user's row is share-locked first, so a revocation running at the same time
     * either comes first (and none is issued) or waits for the issued token and deletes it.
     */
    const issue = (user: CheckedUser) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const unchanged = yield* sql`
            SELECT 1 FROM users
            WHERE id = ${user.id} AND NOT disabled
              AND password_hash = ${user.password_hash} AND refresh_token_hash = ${user.refresh_token_hash}
            FOR SHARE`
          if (unchanged.length === 0) return Option.none<IssuedToken>()
          const key = secret.current()
          const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          const current = yield* sql<{ seed: Buffer; token_hash: Buffer; expires: number }>`
            SELECT seed, token_hash, floor(extract(epoch FROM expires))::int8 AS expires
            FROM access_tokens
            WHERE user_id = ${user.id} AND expires > to_timestamp(${now})
            ORDER BY expires DESC`
          for (const row of current) {
            const candidate = token(key, row.seed)
            if (timingSafeEqual(sha256(candidate), row.token_hash)) return Option.some({ accessToken: candidate, expires: row.expires })
          }
          const seed = randomBytes(32)
          const accessToken = token(key, seed)
          const expires = now + ACCESS_TOKEN_LIFETIME_SECONDS
          yield* sql`DELETE FROM access_tokens WHERE user_id = ${user.id} AND expires <= to_timestamp(${now})`
          yield* sql`INSERT INTO access_tokens (token_hash, seed, user_id, expires)
            VALUES (${sha256(accessToken)}, ${seed}, ${user.id}, to_timestamp(${expires}))`
          return Option.some<IssuedToken>({ accessToken, expires })
        })
      )

    /** Deletes the user's access tokens (their deletion is announced to every instance's cache). */
    const revokeAll = (userId: number) => sql`DELETE FROM access_tokens WHERE user_id = ${userId}`.pipe(Effect.asVoid)

    /** Deletes the access token stored under `hash`, and no other. */
    const revoke = (hash: Uint8Array) => sql`DELETE FROM access_tokens WHERE token_hash = ${hash}`.pipe(Effect.asVoid)

    /** Deletes every access token of every user (a new token secret); answers how many there were. */
    const revokeEveryone = Effect.map(
      sql<{ n: number }>`WITH gone AS (DELETE FROM access_tokens RETURNING 1) SELECT count(*)::int8 AS n FROM gone`,
      (rows) => rows[0]?.n ?? 0
    )

    return { issue, revokeAll, revoke, revokeEveryone } as const
  })
}) {}
