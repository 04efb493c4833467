// The listeners of a state that changes, for `subscribe` / `getSnapshot` bindings (React's
// useSyncExternalStore, Vue, Svelte): `Chat` and its mirror on a page (promptloom/remote)
// share them. A listener's throw is its own: it is reported, and the others are called.

import { PromptloomError } from './instance.js';

export class Listeners {
  /** @type {Set<() => void>} */
  #set = new Set();

  /**
   * Adds `listener`; returns the function that removes it.
   * @param {() => void} listener
   */
  add(listener) {
    if (typeof listener !== 'function') throw new PromptloomError('InvalidOptions', 'subscribe() takes a function (at listener)', { path: 'listener' });
    this.#set.add(listener);
    return () => {
      this.#set.delete(listener);
    };
  }

  /** Calls every listener. */
  notify() {
    for (const l of this.#set) {
      try {
        l();
      } catch (e) {
        queueMicrotask(() => {
          throw e;
        });
      }
    }
  }

  /** Removes every listener. */
  clear() {
    this.#set.clear();
  }
}
