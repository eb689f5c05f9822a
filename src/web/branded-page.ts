/**
 * The frame of an end user's page (the Connect page, the hosted form, the OAuth pages) with the
 * server's branding (CONTRACT 10): its logo and display name at the top of the card, and its accent
 * colour on buttons, links and focus rings. Like page() in html.ts: one card, no script. The accent
 * comes through a served stylesheet (web/accent-stylesheet.ts), as the pages' CSP allows no inline
 * style. Without branding it is page() itself.
 */
import type { Branding } from '../services/branding/branding.js';
import { accentStylesheetPath } from './accent-stylesheet.js';
import { html, htmlDocument, type SafeHtml } from './html.js';

function brandHeader(branding: Branding): SafeHtml | '' {
  const { displayName, logoUrl } = branding;
  if (!displayName && !logoUrl) return '';
  // Beside the name the logo says nothing more; alone, it stands for the app.
  const logo = logoUrl ? html`<img class="brand-logo" src="${logoUrl}" alt="${displayName ? '' : 'Logo'}">` : '';
  return html`<header class="brand">
${logo}${displayName ? html`<span class="brand-name">${displayName}</span>` : ''}
</header>
`;
}

/** An end user's page in the server's colours; `branding` null (no server known yet) is Keyward's own look. */
export function brandedPage(branding: Branding | null, title: string, body: SafeHtml): string {
  const stylesheet = branding?.accentColor ? accentStylesheetPath(branding.accentColor) : '/assets/keyward.css';
  return htmlDocument(
    title,
    { stylesheet },
    html`<body>
<main class="card">
${branding ? brandHeader(branding) : ''}${body}
</main>
<footer>Secured by Keyward</footer>
</body>`,
  );
}
