import { Typography } from '@mui/material';
import type { ReactNode } from 'react';

/** The guides' step headings (Getting Started's integration steps and its "Unlock from your backend"). */
export function StepTitle({ children }: { children: ReactNode }) {
  return (
    <Typography variant="h3" component="h2" sx={{ mb: 1 }}>
      {children}
    </Typography>
  );
}

/** One term and value of a guide's definition list (an id, a URL to copy). */
export function Value({ term, children }: { term: string; children: ReactNode }) {
  return (
    <>
      <Typography component="dt" sx={{ fontWeight: 600 }}>
        {term}
      </Typography>
      <Typography component="dd" sx={{ m: 0, mb: { xs: 1, sm: 0 }, overflowWrap: 'anywhere', minWidth: 0 }}>
        {children}
      </Typography>
    </>
  );
}
