import { describe, expect, it } from "@effect/vitest"
import { isbot } from "isbot"
import { MAX_USER_AGENT } from "../src/Clicks/ClickSource.ts"
import { botAgentTest } from "../src/Redirect/BotAgent.ts"

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

describe("the redirect thread's bot test", () => {
  it("answers as isbot does, a missing agent as an empty one", () => {
    const isBot = botAgentTest(10)
    for (const agent of [CHROME, GOOGLEBOT, "curl/8.5.0", "", "x".repeat(MAX_USER_AGENT + 1), `${CHROME} ${"y".repeat(MAX_USER_AGENT)}`]) {
      expect(isBot(agent)).toBe(isbot(agent))
    }
    expect(isBot(undefined)).toBe(isbot(""))
  })

  it("remembers the agents it tested, and never one longer than MAX_USER_AGENT", () => {
    const tested: Array<string> = []
    const isBot = botAgentTest(2, (agent) => {
      tested.push(agent)
      return agent === "bot"
    })
    expect([isBot("a"), isBot("bot"), isBot("a"), isBot("bot")]).toEqual([false, true, false, true])
    expect(tested).toEqual(["a", "bot"])
    const long = "z".repeat(MAX_USER_AGENT + 1)
    isBot(long)
    isBot(long)
    expect(tested.filter((agent) => agent === long)).toHaveLength(2)
  })
})
