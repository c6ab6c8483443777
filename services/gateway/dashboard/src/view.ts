import type { Call } from './api.ts';

/** What a view gets: the API, where to draw, how to move on. It returns its cleanup (timers). */
export interface ViewContext {
  call: Call;
  main: HTMLElement;
  go(route: string): void;
}
export type View = (ctx: ViewContext) => () => void;
