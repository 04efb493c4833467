// The listeners of a state that changes, for `subscribe` / `getSnapshot` bindings (React's
// useSyncExternalStore, Vue, Svelte): `Chat` and its mirror on a page (promptloom/remote)
// share them. A listener's throw is its own: it is reported, and the others are called.

import { PromptloomError } from './instance.js';

export class Listeners {
  /**
   * The listeners, a new array on each change (a notify walks the one it started with, and
   * allocates nothing: it runs on every streamed token).
   * @type {readonly (() => void)[]}
   */
  #list = [];

  /**
   * Adds `listener` (once: adding it again changes nothing); returns the function that
   * removes it.
   * @param {() => void} listener
   */
  add(listener) {
    if (typeof listener !== 'function') throw new PromptloomError('InvalidOptions', 'subscribe() takes a function (at listener)', { path: 'listener' });
    if (!this.#list.includes(listener)) this.#list = [...this.#list, listener];
    return () => {
      this.#list = this.#list.filter((l) => l !== listener);
    };
  }

  /** Calls every listener. */
  notify() {
    const list = this.#list;
    for (let i = 0; i < list.length; i++) {
      try {
        list[i]();
      } catch (e) {
        queueMicrotask(() => {
          throw e;
        });
      }
    }
  }

  /** Removes every listener. */
  clear() {
    this.#list = [];
  }
}
