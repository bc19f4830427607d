// The customer app's entry (web/app/index.html, served at /app/): the session kept on the phone, the
// query cache, the service worker (web/src/shared/pwa.tsx).
import { startApp } from '../shared/pwa';
import { setAppName } from '../shared/ui';
import { App } from './App';
import { BRAND } from './ui';
import '../shared/styles.css';
import '../shared/phone.css';
import './customer.css';

setAppName(BRAND);
startApp({ scope: '/app/', storageKey: 'customer.refreshToken', App });
