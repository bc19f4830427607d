// Web Push in the driver app's and the customer app's service workers (contract sections 19 and 20):
// imported by each Workbox worker (web/vite.config.ts, importScripts), which keeps the app shell; the
// URLs come from the worker's own scope (/driver/ or /app/). A push is JSON from the server
// (src/modules/push/push.service.ts): an offer is shown as a notification whose tap opens the app at
// the offer; a job's moment (customers' apps) as a short status line. Text only: a notification
// shows no HTML.
/* global self */
'use strict';

(function () {
  const scope = self.registration.scope; // https://host/driver/ or https://host/app/

  const JOB_TEXT = {
    ACCEPTED: 'A driver accepted your ride',
    ASSIGNED: 'A driver is on the way to pick up your package',
    ARRIVED: 'Your driver has arrived',
    COMPLETED: 'Your ride is complete',
    DELIVERED: 'Your package was delivered',
  };

  /** The notification for a push message: { title, options } or null for what this app does not show. */
  function notificationFor(message) {
    if (message && message.type === 'offer' && typeof message.offerId === 'string') {
      // The price as the server formatted it (ISO 4217's decimals; the phone's Intl may differ).
      const parts = [String(message.pickupArea || ''), typeof message.priceText === 'string' ? message.priceText : ''].filter(Boolean);
      return {
        // The server writes title and body in the driver's language (contract section 27); the
        // English below is for a payload from a server before that.
        title: typeof message.title === 'string' ? message.title : 'New offer',
        options: {
          body: typeof message.body === 'string' ? message.body : parts.join(' · '),
          tag: 'offer-' + message.offerId,
          renotify: true,
          requireInteraction: true,
          timestamp: Date.now(),
          icon: scope + 'icon-192.png',
          badge: scope + 'icon-192.png',
          vibrate: [200, 100, 200],
          data: { url: scope + '?offer=' + encodeURIComponent(message.offerId), deadline: message.deadline, offerId: message.offerId },
        },
      };
    }
    if (message && message.type === 'job' && typeof message.jobId === 'string') {
      return {
        title:
          typeof message.title === 'string'
            ? message.title
            : JOB_TEXT[message.status] || 'Your ' + (message.jobType === 'RIDE' ? 'ride' : 'package') + ' changed',
        options: {
          ...(typeof message.body === 'string' ? { body: message.body } : {}),
          tag: 'job-' + message.jobId,
          icon: scope + 'icon-192.png',
          data: { url: scope + '?' + (message.jobType === 'RIDE' ? 'ride' : 'package') + '=' + encodeURIComponent(message.jobId) },
        },
      };
    }
    return null;
  }

  self.addEventListener('push', function (event) {
    let message = null;
    try {
      message = event.data ? event.data.json() : null;
    } catch {
      message = null;
    }
    const shown = notificationFor(message);
    if (!shown) return;
    // An offer past its deadline (the push service held it while the phone was away) is not shown.
    if (message.type === 'offer' && Date.parse(message.deadline) <= Date.now()) return;
    if (message.type !== 'offer') {
      event.waitUntil(self.registration.showNotification(shown.title, shown.options));
      return;
    }
    // Nor an offer while nobody is signed in on this phone (a driver signed out, offline perhaps,
    // before the server heard of it): the driver app keeps this entry while a driver is signed in
    // (web/src/driver/sign-out.ts).
    event.waitUntil(
      signedIn().then(function (yes) {
        return yes ? self.registration.showNotification(shown.title, shown.options) : undefined;
      }),
    );
  });

  function signedIn() {
    if (!self.caches) return Promise.resolve(true);
    return self.caches
      .open('driver-signed-in')
      .then(function (cache) {
        return cache.match(scope + 'signed-in');
      })
      .then(
        function (entry) {
          return Boolean(entry);
        },
        function () {
          return true;
        },
      );
  }

  self.addEventListener('notificationclick', function (event) {
    event.notification.close();
    const url = (event.notification.data && event.notification.data.url) || scope;
    event.waitUntil(
      self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then(function (windows) {
        for (const client of windows) {
          if (client.url.indexOf(scope) === 0 && 'focus' in client) {
            // The app open already: it reads its open offers when it comes to the front.
            client.postMessage({ type: 'notification.click', url: url, offerId: event.notification.data && event.notification.data.offerId });
            return client.focus();
          }
        }
        return self.clients.openWindow(url);
      }),
    );
  });
})();
