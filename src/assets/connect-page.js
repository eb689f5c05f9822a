// The Connect page's only script (connect/connect-page-views.ts). Everything on the page works without
// it; in connect.js's popup it tells the opening page what happened (CONTRACT 10): each event is posted
// once per origin the session allows, so the browser delivers it only where the opener's origin is
// one of them, and a page on any other origin gets nothing. Its data comes from data attributes:
// the page's CSP runs no inline script.
//
// Besides the events, two messages for connect.js alone: "shown" (the popup is on this page) and
// "leaving" (it goes to a provider). A provider's page that sends Cross-Origin-Opener-Policy severs the
// popup from its opener: the opener then sees the popup closed, and the page comes back here with no
// window.opener to tell. "leaving" tells connect.js to ask Keyward how the flow ended instead of taking
// the popup for closed; and the page still closes itself after a connection.
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
  // connect.js names its popup; after a trip to a provider the server knows it from the flow (the
  // name is gone where the provider's page severed the popup).
  const inPopup = data.dataset.popup === '1' || (!!opener && window.name === 'keyward_connect');
  if (!inPopup) return;

  const post = (message) => {
    if (!opener) return; // severed: connect.js asks Keyward instead
    for (const origin of origins) {
      try {
        opener.postMessage({ keyward: 'connect', ...message }, origin);
      } catch {
        // An origin the browser cannot parse: nothing is sent to it.
      }
    }
  };

  // The forms say so, so that a connection made in the popup ends here rather than at the redirect URI.
  for (const input of document.querySelectorAll('input[name="popup"]')) input.value = '1';
  post({ type: 'shown' });
  // Back from the browser's cache (the Back button at a provider's page): here again, not at the provider.
  window.addEventListener('pageshow', (show) => {
    if (show.persisted) post({ type: 'shown' });
  });
  for (const event of events) post(event);
  for (const form of document.querySelectorAll('form[data-keyward-oauth]')) {
    form.addEventListener('submit', () => post({ type: 'leaving', provider: form.dataset.keywardOauth }));
  }
  // "Done" in the popup closes it; where the browser refuses, the link goes on to its page.
  for (const done of document.querySelectorAll('[data-keyward-done]')) {
    done.addEventListener('click', (click) => {
      window.close();
      if (window.closed) click.preventDefault();
    });
  }
  // The first connection ends the popup (connect.js closes it too, once told). Where the browser
  // refuses, the page already says the provider is connected.
  if (events.some((event) => event.type === 'connected')) setTimeout(() => window.close(), 150);
})();
