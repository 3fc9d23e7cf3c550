/**
 * `cli import` of 100,000 links (issue #19: under 60 s on PostgreSQL): a CSV file of our own format
 * is generated (nine links in ten with an alias, one of 50 tags on each, creation dates over two
 * years, click counts), and the bundled CLI imports it into a domain of a fresh database, timed from
 * the process's start to its exit (migrations, reading the file twice, every batch's transaction).
 *
 *   npm run bench:import [-- --links 100000 --batch-size 1000]
 *
 * BENCH_DATABASE_URL or DATABASE_URL names the PostgreSQL server; without either it runs on the
 * embedded database (slower, and not the target's).
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import pg from "pg"
import { benchDatabase } from "./support/BenchDatabase.ts"
import { type Cleanup, runProgram } from "./support/Cleanup.ts"
import { seededRandom } from "./support/Random.ts"

const { values: args } = parseArgs({
  options: {
    links: { type: "string", default: "100000" },
    "batch-size": { type: "string", default: "1000" }
  }
})
const LINKS = Number(args.links)
const TARGET_SECONDS = 60
const ROOT = fileURLToPath(new URL("..", import.meta.url))

const csvFile = (path: string) => {
  const random = seededRandom(19)
  const start = Date.UTC(2024, 0, 1) / 1000
  const rows = ["alias,url,title,tags,created,clicks"]
  for (let n = 0; n < LINKS; n++) {
    const alias = random() < 0.9 ? `link-${n}` : ""
    const created = new Date((start + Math.floor(random() * 2 * 365 * 86_400)) * 1000).toISOString()
    rows.push(`${alias},https://example.com/products/${n}?ref=import,"Product ${n}, page",tag-${n % 50},${created},${Math.floor(random() * 1000)}`)
  }
  writeFileSync(path, `${rows.join("\n")}\n`)
}

const run = (command: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

runProgram("bench:import", async (cleanup: Cleanup) => {
  const database = await benchDatabase(cleanup)
  const bundle = mkdtempSync(join(ROOT, ".bench-import-"))
  cleanup.defer("remove the CLI bundle", async () => rmSync(bundle, { recursive: true, force: true }))
  execFileSync(process.execPath, ["scripts/bundle-cli.mjs", bundle], { cwd: ROOT })
  const cli = join(bundle, "Cli", "main.js")
  const migrated = await run(process.execPath, [cli, "migrate"], database.env)
  if (migrated.code !== 0) throw new Error(`migrate failed: ${migrated.stderr}`)

  let domainId = 0
  const url = database.env["DATABASE_URL"]
  if (url === undefined) throw new Error("bench:import measures PostgreSQL: set BENCH_DATABASE_URL or DATABASE_URL")
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const account = await client.query<{ id: string }>("INSERT INTO accounts (name, plan) VALUES ('bench', 'enterprise') RETURNING id")
    const accountId = account.rows[0]!.id
    await client.query(
      `INSERT INTO users (account_id, email, nickname, role, password_hash, refresh_token_hash)
       VALUES ($1, 'bench@example.com', 'bench', 'account_admin', 'x', decode(md5('bench'), 'hex'))`,
      [accountId]
    )
    const domain = await client.query<{ id: string }>("INSERT INTO domains (account_id, domain) VALUES ($1, 'bench.example') RETURNING id", [accountId])
    domainId = Number(domain.rows[0]!.id)
  } finally {
    await client.end()
  }

  const files = mkdtempSync(join(tmpdir(), "links-bench-import-"))
  cleanup.defer("remove the import file", async () => rmSync(files, { recursive: true, force: true }))
  const file = join(files, "links.csv")
  csvFile(file)

  const started = process.hrtime.bigint()
  const imported = await run(process.execPath, [cli, "import", "--from", "csv", file, "--domain", String(domainId), "--batch-size", args["batch-size"], "--json"], database.env)
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  if (imported.code !== 0) throw new Error(`import failed: ${imported.stderr}`)
  const summary: Record<string, unknown> = JSON.parse(imported.stdout.trimEnd().split("\n").at(-1) ?? "{}")

  const check = new pg.Client({ connectionString: url })
  await check.connect()
  const [stored] = (await check.query<{ n: string }>("SELECT count(*) AS n FROM links WHERE domain_id = $1", [domainId])).rows
  await check.end()

  process.stdout.write(
    `${database.kind}: imported ${String(summary["imported"])} of ${LINKS} links (${stored?.n ?? "?"} stored, ` +
      `${String(summary["conflicts"])} conflicts, ${String(summary["invalid"])} invalid) in ${seconds.toFixed(1)} s ` +
      `(${Math.round(LINKS / seconds).toLocaleString("en-US")} links/s), batches of ${args["batch-size"]}\n` +
      `target under ${TARGET_SECONDS} s: ${seconds < TARGET_SECONDS && Number(stored?.n) === LINKS ? "PASS" : "FAIL"}\n`
  )
  return 0
})
