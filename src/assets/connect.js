/*
 * Keyward's connect.js (CONTRACT 10): open a Connect page from a company's own page.
 *
 *   <script src="https://keyward.example.com/connect.js"></script>
 *   const result = await Keyward.connect(session.url, { onEvent: (event) => console.log(event) });
 *
 * Opens the page in a popup; where the browser blocks popups, the whole page goes to the Connect page
 * instead (and comes back to the session's redirectUri with ?status=success&sessionId=…&provider=…, or
 * ?status=done&sessionId=… for "Done"). The promise resolves with
 *   { status: "connected", provider, credentialId }  at the first connection (the popup closes),
 *   { status: "closed" }                             when the end user closes the popup,
 *   { status: "error", code }                        when they close it after a failed connection,
 *                                                    or the URL is not a Connect page's.
 * onEvent gets { type: "connected" | "disconnected" | "error", provider, credentialId?, code? } for
 * each. Only messages from the Connect page's own origin and popup are taken, and the page sends them
 * only to the origins the session allows (allowedOrigins). No dependencies.
 */
(() => {
  const POPUP_NAME = 'keyward_connect';
  const WIDTH = 480;
  const HEIGHT = 720;

  function connect(url, options) {
    const onEvent = options && typeof options.onEvent === 'function' ? options.onEvent : () => {};
    return new Promise((resolve) => {
      let target;
      try {
        target = new URL(url, window.location.href);
      } catch {
        resolve({ status: 'error', code: 'invalid_url' });
        return;
      }
      if (!/^https?:$/.test(target.protocol) || !/^\/connect\/s\/[A-Za-z0-9_-]+$/.test(target.pathname)) {
        resolve({ status: 'error', code: 'invalid_url' });
        return;
      }
      const left = Math.max(0, (window.screenX || 0) + ((window.outerWidth || WIDTH) - WIDTH) / 2);
      const top = Math.max(0, (window.screenY || 0) + ((window.outerHeight || HEIGHT) - HEIGHT) / 2);
      const popup = window.open(target.href, POPUP_NAME, `popup=yes,width=${WIDTH},height=${HEIGHT},left=${left},top=${top}`);
      if (!popup) {
        // Blocked: the whole page goes, and the session's redirectUri brings the end user back.
        window.location.assign(target.href);
        return;
      }
      let ended = false;
      let lastError = null;
      const finish = (result) => {
        if (ended) return;
        ended = true;
        window.removeEventListener('message', onMessage);
        clearInterval(watch);
        resolve(result);
      };
      const tell = (event) => {
        try {
          onEvent(event);
        } catch (error) {
          // The caller's handler failing must not stop the connection: report it as uncaught.
          setTimeout(() => {
            throw error;
          });
        }
      };
      function onMessage(message) {
        if (message.origin !== target.origin || message.source !== popup) return;
        const data = message.data;
        if (data?.keyward !== 'connect' || typeof data.type !== 'string' || typeof data.provider !== 'string') return;
        const event = { type: data.type, provider: data.provider };
        if (typeof data.credentialId === 'string') event.credentialId = data.credentialId;
        if (typeof data.code === 'string') event.code = data.code;
        tell(event);
        if (event.type === 'error') lastError = event.code || 'connection_failed';
        if (event.type === 'connected') {
          lastError = null;
          try {
            popup.close();
          } catch {
            // Already closing itself.
          }
          finish({ status: 'connected', provider: event.provider, credentialId: event.credentialId });
        }
      }
      window.addEventListener('message', onMessage);
      const watch = setInterval(() => {
        if (popup.closed) finish(lastError ? { status: 'error', code: lastError } : { status: 'closed' });
      }, 300);
    });
  }

  window.Keyward = Object.assign(window.Keyward || {}, { connect });
})();
