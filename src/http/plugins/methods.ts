/**
 * `405 Method Not Allowed` for a known path asked with a method it lacks (RFC 9110 §15.5.6;
 * docs/api-decisions.md "Errors"): `PATCH /v1/trunks` is 405 with `Allow: GET, HEAD, POST` and
 * the error body (`invalid_request`), where fastify alone answers 404.
 *
 * Every route's methods are collected as it is registered (an `onRoute` hook on the root, so
 * routes added later in any scope are covered) into a second router, built by the library
 * fastify routes with and with the same options, so a path matches here exactly when it matches
 * there. The not-found handler asks it which methods the path has.
 */
import type { FastifyInstance } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';

/** Which methods a request path has routes for. */
export interface MethodIndex {
  /**
   * The methods with a route for `path` (the URL's path, without the query), sorted; empty when
   * no route has this path under any method.
   */
  allowedFor(path: string): string[];
}

/**
 * Starts collecting the methods of every route registered on `app` from now on.
 * Call before any route is registered.
 * @param maxParamLength the router option fastify is built with (the two must match).
 */
export function collectRouteMethods(app: FastifyInstance, maxParamLength: number): MethodIndex {
  const router = FindMyWay({ maxParamLength });
  const methods = new Set<HTTPMethod>();
  const noop = () => {};
  app.addHook('onRoute', (route) => {
    const list = Array.isArray(route.method) ? route.method : [route.method];
    for (const name of list) {
      const method = name.toUpperCase() as HTTPMethod;
      methods.add(method);
      router.on(method, route.url, noop);
    }
  });
  return {
    allowedFor(path) {
      return [...methods].filter((method) => router.find(method, path) !== null).sort();
    },
  };
}
