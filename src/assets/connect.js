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
 *
 * A provider's sign-in page may send Cross-Origin-Opener-Policy (Google's and Microsoft's do): the
 * browser then severs the popup from this page, which sees it closed while the end user is still at
 * the provider, and hears nothing from it any more. So when the popup closes after the page said it
 * was leaving for a provider, connect.js asks the page's status (GET {url}/status, about once a
 * second, readable only from an allowed origin; read once too as the popup opens, so that a flow an
 * earlier popup of the same link left is not taken for this one's) until that flow ends, and resolves
 * as above: at a
 * connection; at a failure (told to onEvent at once) once about 10 s pass with no new attempt from the
 * popup, which still shows the page; when nothing is pending any more (expired), or the status cannot
 * be read. The cost: a popup the end user closes at the provider's page resolves only when that flow
 * ends (within 10 minutes), and one closed after a failure there resolves about 10 s later.
 */
(() => {
  const POPUP_NAME = 'keyward_connect';
  const WIDTH = 480;
  const HEIGHT = 720;
  const EVENT_TYPES = ['connected', 'disconnected', 'error'];
  const POLL_MS = 1000;
  /** Status reads that may fail in a row (the network, a restarting node) before connect.js gives up. */
  const MAX_MISSES = 3;
  /** Reads (about 10 s) after a failure in which the end user may try again in the severed popup. */
  const RETRY_READS = 10;

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
      /** The page's status: the newest flow the session's page started in a popup (see the header). */
      const readStatus = async () => {
        try {
          const response = await fetch(`${target.origin}${target.pathname}/status`, { mode: 'cors', credentials: 'omit' });
          return response.ok ? await response.json() : null;
        } catch {
          // Refused (an origin the session does not allow, or an unknown or expired link) or not reached.
          return null;
        }
      };
      // The newest flow before this popup opened: an answer about that one is not this popup's (a
      // session's link serves any number of connections, and an earlier popup may have left one).
      const before = readStatus().then((state) => (state && typeof state.flow === 'string' ? state.flow : null));
      let ended = false;
      let lastError = null;
      /** The last thing the popup said was that it left for a provider. */
      let leaving = false;
      const finish = (result) => {
        if (ended) return;
        ended = true;
        window.removeEventListener('message', onMessage);
        clearInterval(watch);
        resolve(result);
      };
      const closed = () => finish(lastError ? { status: 'error', code: lastError } : { status: 'closed' });
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
      const connected = (event) => {
        tell(event);
        finish({ status: 'connected', provider: event.provider, credentialId: event.credentialId });
      };
      function onMessage(message) {
        if (message.origin !== target.origin || message.source !== popup) return;
        const data = message.data;
        if (data?.keyward !== 'connect' || typeof data.type !== 'string') return;
        leaving = data.type === 'leaving';
        // "shown" and "leaving" are connect.js's own: onEvent gets the page's events only.
        if (!EVENT_TYPES.includes(data.type) || typeof data.provider !== 'string') return;
        const event = { type: data.type, provider: data.provider };
        if (typeof data.credentialId === 'string') event.credentialId = data.credentialId;
        if (typeof data.code === 'string') event.code = data.code;
        if (event.type === 'error') lastError = event.code || 'connection_failed';
        if (event.type !== 'connected') {
          tell(event);
          return;
        }
        lastError = null;
        try {
          popup.close();
        } catch {
          // Already closing itself.
        }
        connected(event);
      }
      let misses = 0;
      /** After a failure told: the reads left for the end user to try again in the popup; null before. */
      let retryReads = null;
      /** The popup's newest flow, read from the page's status until it ends (see the header). */
      async function follow() {
        const [state, earlier] = await Promise.all([readStatus(), before]);
        if (ended) return;
        // Nothing of this popup's: the page's POST made no flow (or never reached Keyward).
        if (state && earlier !== null && state.flow === earlier) return closed();
        const again = () => setTimeout(follow, POLL_MS);
        if (!state || typeof state.status !== 'string') {
          misses += 1;
          return misses >= MAX_MISSES ? closed() : again();
        }
        misses = 0;
        if (state.status === 'pending') {
          retryReads = null;
          return again();
        }
        if (state.status === 'connected') return connected({ type: 'connected', provider: state.provider, credentialId: state.credentialId });
        if (state.status === 'failed') {
          if (retryReads === null) {
            lastError = state.code || 'connection_failed';
            tell({ type: 'error', provider: state.provider, code: lastError });
            retryReads = RETRY_READS;
          }
          if (retryReads > 0) {
            retryReads -= 1;
            return again();
          }
        }
        closed();
      }
      window.addEventListener('message', onMessage);
      const watch = setInterval(() => {
        if (!popup.closed) return;
        if (!leaving) return closed();
        clearInterval(watch);
        follow();
      }, 300);
    });
  }

  window.Keyward = Object.assign(window.Keyward || {}, { connect });
})();
