import type { Theme } from '@mui/material';
import { visuallyHidden } from './visually-hidden';

/**
 * A Table's sx that, on a phone, stops squeezing its columns to a few letters each: every row becomes its
 * first cell (full width) over the other cells two by two, each captioned by its `data-caption` (give it
 * the column's header). It stays one table row of cells, and the column headers stay for screen readers.
 * A cell with `data-stack="full"` takes a whole line (a long text); the row's actions cell (`data-actions`,
 * no caption: its buttons are named) sits at the end of the first line, so it is never off-screen.
 */
export const stackedOnPhone = (theme: Theme) => ({
  [theme.breakpoints.down('sm')]: {
    tableLayout: 'auto',
    '& thead': visuallyHidden,
    '& tbody tr': {
      display: 'grid',
      gridTemplateColumns: 'repeat(2, minmax(0, 1fr))',
      // A whole-line cell does not leave a hole: the next half-width cell fills it.
      gridAutoFlow: 'row dense',
      position: 'relative',
      columnGap: 2,
      borderBottom: 1,
      borderColor: 'divider',
      py: 1,
    },
    '& tbody tr > :first-child': { gridColumn: '1 / -1', fontWeight: 600 },
    // A message row (nothing found) is not a heading.
    '& tbody tr > :only-child': { fontWeight: 400 },
    '& tbody tr:has(> [data-actions]) > :first-child': { pr: 6 },
    '& tbody th, & tbody td': { border: 0, px: 0, py: 0.5, minWidth: 0, textAlign: 'left' },
    '& tbody [data-stack="full"]': { gridColumn: '1 / -1' },
    '& tbody [data-actions]': { position: 'absolute', top: 0, right: 0, py: 0.5 },
    '& tbody [data-caption]::before': {
      content: 'attr(data-caption)',
      display: 'block',
      ...theme.typography.caption,
      color: theme.palette.text.secondary,
      fontWeight: 400,
    },
  },
});
