// The driver app's entry (web/driver/index.html, served at /driver/): the session kept on the phone,
// the query cache, the service worker (web/src/shared/pwa.tsx).
import { startApp } from '../shared/pwa';
import { setAppName } from '../shared/ui';
import { App } from './App';
import '../shared/styles.css';
import '../shared/phone.css';
import './driver.css';

setAppName('Driver');
startApp({ scope: '/driver/', storageKey: 'driver.refreshToken', App });
