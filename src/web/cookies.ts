/** The few cookie helpers the pages share; no cookie library is needed for these. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

export function cookie(name: string, value: string, options: { path: string; sameSite: 'Strict' | 'Lax'; secure: boolean; maxAge?: number }): string {
  return [
    `${name}=${value}`,
    `Path=${options.path}`,
    'HttpOnly',
    `SameSite=${options.sameSite}`,
    ...(options.secure ? ['Secure'] : []),
    ...(options.maxAge !== undefined ? [`Max-Age=${options.maxAge}`] : []),
  ].join('; ');
}
