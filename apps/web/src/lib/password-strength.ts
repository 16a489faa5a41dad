/** A password's estimated strength, 0 (guessed at once) to 4 (very unlikely to be guessed). */
export type PasswordScore = 0 | 1 | 2 | 3 | 4;

type Estimator = (password: string, userInputs: string[]) => PasswordScore;
let estimator: Promise<Estimator> | null = null;

/**
 * zxcvbn-ts with its common-password dictionaries (~400 KB before gzip) is loaded the first time a password
 * is typed into a new-password field, in its own chunk: no page carries it until then.
 */
function loadEstimator(): Promise<Estimator> {
  estimator ??= Promise.all([import('@zxcvbn-ts/core'), import('@zxcvbn-ts/language-common')]).then(([core, common]) => {
    const zxcvbn = new core.ZxcvbnFactory({ dictionary: { ...common.dictionary }, graphs: common.adjacencyGraphs });
    return (password, userInputs) => zxcvbn.check(password, userInputs).score as PasswordScore;
  });
  return estimator;
}

/** The estimate for a password; what the person entered elsewhere on the form (email, name) counts as guessable. */
export async function estimatePasswordStrength(password: string, userInputs: string[] = []): Promise<PasswordScore> {
  return (await loadEstimator())(password, userInputs.filter(Boolean));
}
