import { expect, test } from '@playwright/test';

/**
 * MUI learns that the browser autofilled a field from an animation the field's CSS starts (the label then
 * shrinks). The keyframes live once in the baseline styles instead of one style sheet per input
 * (docs/performance.md); the fields must still start the animation.
 */
test('the sign-in fields start the autofill-detection animation, with its keyframes in one style sheet', async ({ page }) => {
  await page.addInitScript(() => {
    const started: string[] = [];
    (window as unknown as { started: string[] }).started = started;
    document.addEventListener('animationstart', (e) => started.push(`${(e.target as HTMLElement).id}:${e.animationName}`), true);
  });
  await page.goto('/login');
  await expect(page.getByLabel('Email')).toBeVisible();

  const inputIds = await page.locator('input').evaluateAll((inputs) => inputs.map((i) => i.id));
  expect(inputIds.length).toBeGreaterThanOrEqual(2);
  await expect
    .poll(() => page.evaluate(() => (window as unknown as { started: string[] }).started))
    .toEqual(expect.arrayContaining(inputIds.map((id) => `${id}:mui-auto-fill-cancel`)));

  const sheetsWithKeyframes = await page.evaluate(
    () =>
      [...document.styleSheets].filter((sheet) =>
        [...sheet.cssRules].some((rule) => rule instanceof CSSKeyframesRule && rule.name === 'mui-auto-fill'),
      ).length,
  );
  expect(sheetsWithKeyframes).toBe(1);
});
