import { Effect } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { ClickRepo, type ClickRow } from "../../src/Clicks/ClickRepo.ts"

/** A click to write as the click writer would, at a chosen time (Unix seconds). */
export interface TestClick {
  readonly linkId: number
  readonly domainId: number
  readonly at: number
  readonly ip?: string
  readonly country?: string | null
  readonly region?: string | null
  readonly city?: string | null
  readonly device?: "desktop" | "mobile" | "tablet" | "other"
  readonly referrer?: string
  readonly qr?: boolean
  readonly bot?: boolean
}

export const clickRow = (click: TestClick): ClickRow => ({
  id: randomUUID(),
  at: new Date(click.at * 1000).toISOString(),
  link_id: click.linkId,
  domain_id: click.domainId,
  ip_hash: createHash("sha256").update(click.ip ?? "192.0.2.1").digest("hex").slice(0, 32),
  country: click.country ?? null,
  region: click.region ?? null,
  city: click.city ?? null,
  device: click.bot === true ? "bot" : (click.device ?? "desktop"),
  referrer: click.referrer ?? "direct",
  user_agent: "test",
  qr: click.qr ?? false,
  bot: click.bot ?? false
})

/** Writes the rows through the click writer's own statement, so rollups and counts follow. */
export const writeClickRows = (rows: ReadonlyArray<ClickRow>) =>
  Effect.flatMap(ClickRepo, (repo) => repo.insert(rows)).pipe(Effect.provide(ClickRepo.Default), Effect.orDie)

export const writeClicks = (clicks: ReadonlyArray<TestClick>) => writeClickRows(clicks.map(clickRow))
