/** The smallest safe HTML templating: every interpolated value is escaped by `html`, never concatenated raw. */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = string | number | SafeHtml | null | undefined | false | Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (Array.isArray(part)) return part.map(render).join('');
  if (part instanceof SafeHtml) return part.value;
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): SafeHtml {
  let out = strings[0]!;
  parts.forEach((part, i) => {
    out += render(part) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

/** The document around every page Keyward serves: its own stylesheet, and a script only where one is named. */
export function htmlDocument(title: string, assets: { stylesheet: string; script?: string }, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} · Keyward</title>
<link rel="stylesheet" href="${assets.stylesheet}">
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
${assets.script ? html`<script src="${assets.script}" defer></script>` : ''}
</head>
${body}
</html>
`.value;
}

/** An end user's page (hosted form, OAuth callback): one card, no script. */
export function page(title: string, body: SafeHtml): string {
  return htmlDocument(
    title,
    { stylesheet: '/assets/keyward.css' },
    html`<body>
<main class="card">
${body}
</main>
<footer>Secured by Keyward</footer>
</body>`,
  );
}
