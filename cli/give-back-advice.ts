/**
 * What gives back the node of a `refresh` that died (killed, a closed terminal, a second Ctrl-C): one
 * wording for the refresh output, the failures and Ctrl-C, true to what `release` does (cli/dead-holder.ts)
 * and to the function app's reaper (docs/interrupted-runs.md).
 */
export function giveBackAdvice(pool: string): string {
  return (
    `\`vmss-prototype release --pool ${pool}\` gives back what a dead run of the pool holds (its node ` +
    'first): at once when that run was a refresh on this machine whose process is gone, otherwise once its ' +
    "lease expired (within 15 minutes); so does any later refresh of the pool, and the function app's " +
    'reaper (every 5 minutes) where the app manages this cluster'
  );
}
