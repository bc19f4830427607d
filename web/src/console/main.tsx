// The console's entry (web/index.html): the query cache's defaults and the app.
import { newQueryClient, render } from '../shared/pwa';
import { App } from './App';
import '../shared/styles.css';

render(App, newQueryClient(60_000));
