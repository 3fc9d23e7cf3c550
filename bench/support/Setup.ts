/** One JSON request during setup; anything but a 2xx answer is an error naming the request. */
export const requestJson = async (
  method: "GET" | "POST",
  url: string,
  options: { readonly token?: string; readonly body?: unknown } = {}
): Promise<{ readonly text: string; readonly json: unknown }> => {
  const headers: Record<string, string> = {}
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
  if (options.body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(url, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text.slice(0, 500)}`)
  return { text, json: JSON.parse(text) }
}

export const accessTokenOf = (json: unknown): string => {
  if (typeof json === "object" && json !== null && "access_token" in json && typeof json.access_token === "string") {
    return json.access_token
  }
  throw new Error(`no access_token in ${JSON.stringify(json).slice(0, 500)}`)
}
