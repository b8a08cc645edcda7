// The store, traced (when tracing is on; ./index.ts): every call of its interface is a span, a child
// of the request's, named after the method and marked with the database. A Proxy, so the spans need
// no change to the store and cost nothing while tracing is off, when the store is not wrapped at all.
import type { Store } from '../store/store.ts';
import type { Spans } from './spans.ts';

/** What answers without the database, or is not a call of its own. */
const UNTRACED = new Set(['stats', 'clearCaches', 'resolveClientUrlsWith', 'close']);

export function tracedStore(store: Store, spans: Spans, system: 'sqlite' | 'postgresql'): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || UNTRACED.has(property)) {
        return typeof value === 'function' ? value.bind(target) : value;
      }
      const attributes = { 'db.system.name': system, 'db.operation.name': property };
      // `this` stays the store: its methods use private fields.
      return (...args: unknown[]) =>
        spans.span(`db ${property}`, attributes, async () =>
          (value as (...a: unknown[]) => unknown).apply(target, args),
        );
    },
  });
}
