/** The formats `import --from` reads. */
export const IMPORT_SOURCES = ["csv", "shlink", "yourls", "kutt", "bitly"] as const
export type ImportSource = (typeof IMPORT_SOURCES)[number]
