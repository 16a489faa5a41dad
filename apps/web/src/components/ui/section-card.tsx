import { Box, Paper, Typography } from '@mui/material';
import type { ReactNode } from 'react';

/** A heading with its action at the row's end; on a narrow screen the action wraps below the heading. */
export function HeadingRow({ gap = 1, mb = 0, children }: { gap?: number; mb?: number; children: ReactNode }) {
  return (
    <Box sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', justifyContent: 'space-between', gap, mb }}>
      {children}
    </Box>
  );
}

interface Props {
  /** The heading's id: the section is the region it names, and a table inside may be labelled by it too. */
  headingId: string;
  title: ReactNode;
  /** At the heading row's end (an action button, a status chip); wraps below the heading on a narrow screen. */
  action?: ReactNode;
  /** Room below the heading row, in theme spacing; 0 where what follows sets its own top margin. */
  headerGap?: number;
  children?: ReactNode;
}

/**
 * An outlined card of a page: a `section` labelled by its h2 heading (so a landmark region with the
 * heading's name), a heading row with an optional action at its end, and the content below it.
 */
export function SectionCard({ headingId, title, action, headerGap = 0, children }: Props) {
  return (
    <Paper variant="outlined" component="section" aria-labelledby={headingId} sx={{ p: { xs: 2, sm: 3 } }}>
      <HeadingRow mb={headerGap}>
        <Typography variant="h2" id={headingId} sx={{ overflowWrap: 'anywhere', minWidth: 0 }}>
          {title}
        </Typography>
        {action}
      </HeadingRow>
      {children}
    </Paper>
  );
}
