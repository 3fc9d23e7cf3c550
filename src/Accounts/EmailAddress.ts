/** Why `email` is refused as a user's e-mail address, or undefined when it is acceptable. */
const EMAIL = /^[^\s@]{1,64}@(?!-)[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*$/

export const emailProblem = (email: string) =>
  email.length > 254 || !EMAIL.test(email) ? `"${email}" is not a valid e-mail address` : undefined
