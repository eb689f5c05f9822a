// The Connect page's only script (connect/connect-page-views.ts). Everything on the page works without
// it; in connect.js's popup it tells the opening page what happened (CONTRACT 10): each event is posted
// once per origin the session allows, so the browser delivers it only where the opener's origin is
// one of them, and a page on any other origin gets nothing. Its data comes from data attributes:
// the page's CSP runs no inline script.
(() => {
  const data = document.getElementById('keyward-connect');
  if (!data) return;
  const parse = (text) => {
    try {
      return JSON.parse(text || '[]');
    } catch {
      return [];
    }
  };
  const origins = parse(data.dataset.origins);
  const events = parse(data.dataset.events);
  const opener = window.opener;
  // connect.js names its popup; after a trip to a provider the server knows it from the flow.
  const inPopup = !!opener && (window.name === 'keyward_connect' || data.dataset.popup === '1');
  if (!inPopup) return;

  // The forms say so, so that a connection made in the popup ends here rather than at the redirect URI.
  for (const input of document.querySelectorAll('input[name="popup"]')) input.value = '1';
  for (const event of events) {
    for (const origin of origins) {
      try {
        opener.postMessage({ keyward: 'connect', ...event }, origin);
      } catch {
        // An origin the browser cannot parse: nothing is sent to it.
      }
    }
  }
  // "Done" in the popup closes it.
  for (const done of document.querySelectorAll('[data-keyward-done]')) {
    done.addEventListener('click', (click) => {
      click.preventDefault();
      window.close();
    });
  }
  // The first connection ends the popup (connect.js closes it too, once told).
  if (events.some((event) => event.type === 'connected')) setTimeout(() => window.close(), 150);
})();
