import type { Theme } from '@mui/material';
import { visuallyHidden } from './visually-hidden';

/**
 * A Table's sx that, on a phone, stops squeezing its columns to a few letters each: every row becomes its
 * first cell (full width) over the other cells two by two, each captioned by its `data-caption` (give it
 * the column's header). It stays one table row of cells, and the column headers stay for screen readers.
 */
export const stackedOnPhone = (theme: Theme) => ({
  [theme.breakpoints.down('sm')]: {
    tableLayout: 'auto',
    '& thead': visuallyHidden,
    '& tbody tr': {
      display: 'grid',
      gridTemplateColumns: 'repeat(2, minmax(0, 1fr))',
      columnGap: 2,
      borderBottom: 1,
      borderColor: 'divider',
      py: 1,
    },
    '& tbody tr > :first-child': { gridColumn: '1 / -1', fontWeight: 600 },
    '& tbody th, & tbody td': { border: 0, px: 0, py: 0.5 },
    '& tbody [data-caption]::before': {
      content: 'attr(data-caption)',
      display: 'block',
      ...theme.typography.caption,
      color: theme.palette.text.secondary,
      fontWeight: 400,
    },
  },
});
