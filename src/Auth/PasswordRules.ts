/** Longer inputs are refused before hashing: argon2 cost grows with input length. */
export const MAX_PASSWORD_LENGTH = 1024
export const MIN_PASSWORD_LENGTH = 10

/** Why a password is too weak for an account, or undefined when it is acceptable. */
export const passwordProblem = (password: string, email: string): string | undefined => {
  if (password.trim() === "") return "the password is empty"
  if (password.length < MIN_PASSWORD_LENGTH) return `the password must have at least ${MIN_PASSWORD_LENGTH} characters`
  if (password.length > MAX_PASSWORD_LENGTH) return `the password must have at most ${MAX_PASSWORD_LENGTH} characters`
  if (new Set(password).size < 5) return "the password must use at least 5 different characters"
  if (password.toLowerCase() === email.toLowerCase()) return "the password must not be the e-mail address"
  return undefined
}
