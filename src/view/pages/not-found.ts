import { html } from '../../html/html.js';
import { page } from '../layout.js';
import { htmlResponse, type ViewerResponse } from '../response.js';
import { runCrumbs } from './crumbs.js';

export function notFoundPage(message: string): ViewerResponse {
  return htmlResponse(
    page({
      title: 'Not found',
      crumbs: [...runCrumbs(), ['not found', '']],
      body: html`<section><p>${message}</p></section>`,
    }),
    404,
  );
}
