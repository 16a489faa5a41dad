import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Profiler } from 'react';
import { Controller } from 'react-hook-form';
import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { EditFormScope, useEditFormContext } from './edit-form-scope';

const schema = z.object({ name: z.string().check(z.minLength(1, 'Required')) });
type Values = z.infer<typeof schema>;

function renderScope(values: Values) {
  const renders: boolean[] = [];
  // Each commit of the scope's subtree, with its phase: proof that a re-render of the scope happened.
  const commits = vi.fn<(id: string, phase: string) => void>();
  function Contents() {
    const { form, editing, startEdit, cancel, saveEnabled } = useEditFormContext<Values>();
    renders.push(editing);
    return (
      <>
        <Controller
          control={form.control}
          name="name"
          render={({ field }) => <input aria-label="Name" disabled={!editing} {...field} />}
        />
        <button onClick={startEdit}>Edit</button>
        <button onClick={cancel}>Cancel</button>
        <output aria-label="Save enabled">{String(saveEnabled)}</output>
      </>
    );
  }
  const view = (v: Values) => (
    <Profiler id="scope" onRender={(id, phase) => commits(id, phase)}>
      <EditFormScope schema={schema} values={v}>
        <Contents />
      </EditFormScope>
    </Profiler>
  );
  const result = render(view(values));
  return { renders, commits, rerender: (v: Values) => result.rerender(view(v)) };
}

describe('EditFormScope', () => {
  it('renders its contents once on mount: react-hook-form’s re-render after mounting stops at the scope', async () => {
    const { renders, commits } = renderScope({ name: 'Door app' });
    expect(screen.getByLabelText('Name')).toHaveValue('Door app');
    // react-hook-form's ready state (set in a layout effect) has re-rendered the scope, inside the commit
    // that mounted it (React's 'nested-update'), and the contents were not part of it.
    await waitFor(() => expect(commits).toHaveBeenCalledWith('scope', 'nested-update'));
    expect(renders).toEqual([false]);
  });

  it('re-renders its contents when edit mode or Save’s state changes, and Cancel restores the server values', async () => {
    const user = userEvent.setup();
    const { renders } = renderScope({ name: 'Door app' });
    await user.click(screen.getByRole('button', { name: 'Edit' }));
    expect(screen.getByLabelText('Name')).toBeEnabled();
    await user.clear(screen.getByLabelText('Name'));
    await user.type(screen.getByLabelText('Name'), 'Gate app');
    await waitFor(() => expect(screen.getByLabelText('Save enabled')).toHaveTextContent('true'));
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.getByLabelText('Name')).toHaveValue('Door app');
    expect(screen.getByLabelText('Name')).toBeDisabled();
    expect(renders).toContain(true);
  });

  it('follows new server values while not editing', async () => {
    const { rerender } = renderScope({ name: 'Door app' });
    rerender({ name: 'Renamed elsewhere' });
    await waitFor(() => expect(screen.getByLabelText('Name')).toHaveValue('Renamed elsewhere'));
  });
});
