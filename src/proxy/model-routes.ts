/**
 * The model API the proxy forwards, and nothing else. The real key rides on every forwarded request, and the
 * clients (a sandboxed harness, and the agents' own code beside it) are not trusted: a path or method outside this
 * list (files, fine-tuning, adapters, admin pages, `/v1/completions`, which no thread would record) never reaches
 * the upstream.
 *
 * qwen-code 0.24.4 in headless mode calls only `POST <base>/chat/completions` (its recorded logs in
 * test/fixtures/qwen-code-0.24.4 hold nothing else); `GET <base>/models` is its OpenAI client's model listing,
 * which reads and spends nothing.
 */
export type ModelRouteKind = 'chat' | 'models';

export interface ModelRoute {
  method: 'POST' | 'GET';
  path: string;
  kind: ModelRouteKind;
}

export const MODEL_ROUTES: readonly ModelRoute[] = [
  { method: 'POST', path: '/v1/chat/completions', kind: 'chat' },
  { method: 'GET', path: '/v1/models', kind: 'models' },
];

export type RouteDecision =
  { ok: true; route: ModelRoute } | { ok: false; status: 400 | 404 | 405; message: string; allow?: string };

/** The characters a forwarded path may hold: enough for the routes, too few to encode or escape anything. */
const PLAIN_PATH = /^[A-Za-z0-9/_.-]+$/;
/** How much of a refused request target a message quotes. */
const SHOWN_TARGET_CHARACTERS = 200;

/**
 * Which route a request line names. The target is taken as sent and never resolved, decoded or joined to a URL:
 * an absolute-form target (`GET http://evil/x`), a query string, percent-encoding, a backslash or a `.`, `..` or
 * empty segment is refused as it stands, so that what is checked is exactly what would be forwarded.
 */
export function routeOf(method: string, target: string): RouteDecision {
  const shown = JSON.stringify(
    target.length > SHOWN_TARGET_CHARACTERS ? `${target.slice(0, SHOWN_TARGET_CHARACTERS)}…` : target,
  );
  const refuse = (status: 400 | 404 | 405, why: string, allow?: string): RouteDecision => ({
    ok: false,
    status,
    message: `mass proxy: ${method} ${shown} refused: ${why}; the proxy forwards only ${routeList()}`,
    ...(allow === undefined ? {} : { allow }),
  });
  if (!target.startsWith('/') || target.startsWith('//')) {
    return refuse(400, 'the request target must be a path on this proxy (origin form), not a URL or host');
  }
  if (target.includes('?') || target.includes('#')) {
    return refuse(400, 'query strings and fragments are not forwarded');
  }
  if (!PLAIN_PATH.test(target)) {
    return refuse(
      400,
      'the path may hold only letters, digits and / _ . - (no percent-encoding, backslashes or other characters)',
    );
  }
  const segments = target.split('/').slice(1);
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) {
    return refuse(400, 'empty, "." and ".." path segments are not forwarded');
  }
  const routes = MODEL_ROUTES.filter((route) => route.path === target);
  if (routes.length === 0) return refuse(404, 'not a path of the model API');
  const route = routes.find((candidate) => candidate.method === method);
  if (!route) {
    const allow = routes.map((candidate) => candidate.method).join(', ');
    return refuse(405, `${target} takes ${allow} only`, allow);
  }
  return { ok: true, route };
}

function routeList(): string {
  return MODEL_ROUTES.map((route) => `${route.method} ${route.path}`).join(' and ');
}
